//! Giving back the pages of the index's files that searches mapped in.
//!
//! Qdrant reads its files through shared memory maps: the full vectors a quantized search
//! re-scores (`matrix.dat` of an indexed segment, `chunk_<n>.mmap` of the appendable one),
//! the HNSW graph it walks, the payloads and id trackers of the points it returns, the WAL it
//! replayed at open. Every page touched stays mapped, and so counts in the process's
//! resident memory, until the process ends; a read of one full vector maps its neighbours
//! too (the kernel maps up to 64 KiB of cached pages around a fault). Under a steady load of
//! searches nearly every page gets touched: a 450,000-point index showed 650 MiB of full
//! vectors after 500 queries, and with every vector given back the graph, payload and WAL
//! pages still held 150 MiB. Those pages are copies of the files the kernel's page cache
//! holds; [`release_mapped_pages`] drops the process's mappings of them
//! (`madvise(MADV_DONTNEED)` on shared file mappings under the index's folder only, which
//! never discards data), so a later search maps what it needs again from the cache without
//! reading the disk, and the kernel keeps or reclaims the pages as memory allows. The 1-bit
//! codes of the indexed segments live in the process's own memory and are not touched.

// The one place Cairn calls the OS directly on memory it did not allocate; every call is
// justified where it is made.
#![allow(unsafe_code)]

use std::path::Path;

/// Drops this process's mappings of the files under `root` (an absolute, canonical folder).
/// Returns the bytes of mapping released. Only shared mappings of files are touched (a dirty
/// page of a shared mapping stays dirty in the page cache and is written back as usual): for
/// those the page cache holds the data, so nothing is lost, whatever thread is reading or
/// writing them at the time (it maps the page again).
#[cfg(target_os = "linux")]
pub(crate) fn release_mapped_pages(root: &Path) -> u64 {
    let Ok(maps) = fs_err::read_to_string("/proc/self/maps") else {
        return 0;
    };
    let Some(root) = root.to_str() else {
        return 0;
    };
    let mut released = 0;
    for line in maps.lines() {
        let Some((start, end)) = shared_file_mapping(line, root) else {
            continue;
        };
        // SAFETY: the range is a whole mapping of a file, shared (`MAP_SHARED`), as the
        // kernel lists it. MADV_DONTNEED on a shared file mapping only removes this
        // process's page-table entries; the data stays in the page cache and the file, and
        // the next access faults the page in again. No memory Rust owns is freed.
        let rc =
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
        if rc == 0 {
            released += (end - start) as u64;
        }
    }
    released
}

/// Drops this process's mappings of the files under `dir` (see [`release_mapped_pages`]): for
/// other memory-mapped indexes, such as the keyword index, whose searches map pages of its
/// files the same way. Returns the bytes of mapping released (0 when `dir` does not exist).
pub fn release_mapped_files(dir: &Path) -> u64 {
    match dir.canonicalize() {
        Ok(root) => release_mapped_pages(&root),
        Err(_) => 0,
    }
}

/// How many bytes of file pages searches may map in before they are given back: after a
/// search, [`release_when_over_budget`] gives back every index folder's pages only once the
/// process's resident file pages have grown this much since the last time. Walking the
/// process's mappings (`/proc/self/maps`) costs far more than a search when it is done after
/// every one; a budget keeps the memory bars and drops that cost.
pub const RELEASE_BUDGET: u64 = 32 << 20;

/// The folders (absolute, canonical) whose mappings searches give back, and the resident
/// file pages left after the last release.
struct Budget {
    roots: Vec<std::path::PathBuf>,
    floor: u64,
}

static BUDGET: std::sync::Mutex<Budget> = std::sync::Mutex::new(Budget {
    roots: Vec::new(),
    floor: 0,
});

/// The process's resident pages of files and shared memory, in bytes (`/proc/self/statm`,
/// one short line: cheap, unlike the mappings' list).
#[cfg(target_os = "linux")]
fn resident_file_bytes() -> Option<u64> {
    let statm = fs_err::read_to_string("/proc/self/statm").ok()?;
    let shared: u64 = statm.split_whitespace().nth(2)?.parse().ok()?;
    Some(shared * page_size() as u64)
}

#[cfg(not(target_os = "linux"))]
fn resident_file_bytes() -> Option<u64> {
    None
}

/// After a search of the index under `root` (absolute, canonical): gives back the mapped
/// pages of every folder searched so far when the process's resident file pages have grown
/// by [`RELEASE_BUDGET`] since the last release, else nothing. Returns the bytes released.
pub(crate) fn release_when_over_budget(root: &Path) -> u64 {
    let Some(now) = resident_file_bytes() else {
        return 0;
    };
    let mut budget = BUDGET
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !budget.roots.iter().any(|r| r == root) {
        budget.roots.push(root.to_path_buf());
    }
    if now <= budget.floor.saturating_add(RELEASE_BUDGET) {
        return 0;
    }
    let released = budget.roots.iter().map(|r| release_mapped_pages(r)).sum();
    budget.floor = resident_file_bytes().unwrap_or(now);
    released
}

/// [`release_when_over_budget`] for a folder that may not be canonical (the keyword index's).
pub fn release_files_when_over_budget(dir: &Path) -> u64 {
    match dir.canonicalize() {
        Ok(root) => release_when_over_budget(&root),
        Err(_) => 0,
    }
}

/// Elsewhere the mappings are left to the system.
#[cfg(not(target_os = "linux"))]
pub(crate) fn release_mapped_pages(_root: &Path) -> u64 {
    0
}

/// The address range of a `/proc/self/maps` line when it is a shared mapping of a file
/// under `root`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn shared_file_mapping(line: &str, root: &str) -> Option<(usize, usize)> {
    // start-end perms offset dev inode path
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let perms = fields.next()?;
    let path = fields.nth(3)?.trim_start();
    if perms.as_bytes().get(3) != Some(&b's') {
        return None;
    }
    let under = path
        .strip_prefix(root)
        .is_some_and(|rest| rest.starts_with('/'));
    if !under {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    (end > start && start.is_multiple_of(page_size())).then_some((start, end))
}

fn page_size() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if size > 0 {
            return size as usize;
        }
    }
    4096
}

/// How many malloc arenas glibc may keep (see [`cap_malloc_arenas`]).
pub const MALLOC_ARENAS: i32 = 2;

/// Caps the C allocator's arenas at [`MALLOC_ARENAS`], before the process starts its threads.
/// glibc gives threads that allocate at the same time arenas of their own, up to eight per
/// core, and keeps what each arena once held: the query embedding's threads, the blocking
/// pool's and the index's each grow one, and a search service keeps them all. Under
/// `cairn bench search`'s query load the cap took 10–15 MiB off the resident memory after
/// and at the peak (docs/figures/search.md), at the same query times. Elsewhere (another C
/// library, another system) nothing is done.
pub fn cap_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a tuning parameter of glibc's allocator; M_ARENA_MAX with
    // a positive value is documented and may be set at any time (arenas already made stay).
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/home/u/.local/share/cairn/index/vectors/shards";

    #[test]
    fn only_shared_mappings_of_files_under_the_index_are_released() {
        let line = |perms: &str, path: &str| {
            format!("7f0000000000-7f0000200000 {perms} 00000000 fd:01 123   {path}")
        };
        for (perms, file) in [
            // full vectors of an indexed segment and of the appendable one
            ("r--s", "chunk/segments/ab/vector_storage-chunk/matrix.dat"),
            (
                "rw-s",
                "cue/segments/x/vector_storage-cue/vectors/chunk_0.mmap",
            ),
            // the graph, payloads, an id tracker, the WAL
            (
                "r--s",
                "chunk/segments/ab/vector_index-chunk/links_compressed.bin",
            ),
            ("rw-s", "cue/segments/x/payload_storage/page_0.dat"),
            ("rw-s", "cue/segments/x/id_tracker.versions"),
            ("rw-s", "summary/wal/open-40"),
        ] {
            assert_eq!(
                shared_file_mapping(&line(perms, &format!("{ROOT}/{file}")), ROOT),
                Some((0x7f00_0000_0000, 0x7f00_0020_0000)),
                "{file}"
            );
        }
        for refused in [
            // private: a copy-on-write page could hold changes of its own
            line(
                "r--p",
                &format!("{ROOT}/chunk/segments/ab/vector_storage-chunk/matrix.dat"),
            ),
            // another index whose folder only starts like this one
            line(
                "r--s",
                &format!("{ROOT}2/chunk/segments/ab/vector_storage-chunk/matrix.dat"),
            ),
            // a file elsewhere (the keyword index, the program)
            line("r--s", "/home/u/.local/share/cairn/index/text/a.store"),
            // the folder itself is not a file under it
            line("r--s", ROOT),
            // anonymous memory
            "7f0000000000-7f0000200000 rw-p 00000000 00:00 0 ".to_string(),
            "7f0000000000-7f0000200000 rw-s 00000000 00:01 7   /dev/zero (deleted)".to_string(),
            "garbage".to_string(),
        ] {
            assert_eq!(shared_file_mapping(&refused, ROOT), None, "{refused}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn releasing_a_shared_file_mapping_keeps_its_data() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root
            .join("seg")
            .join("vector_storage-cue")
            .join("matrix.dat");
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        let len = 64 * page_size();
        let mut file = fs_err::File::create(&path).unwrap();
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        file.write_all(&data).unwrap();
        drop(file);
        let file = fs_err::File::open(&path).unwrap();
        // SAFETY: a fresh read-only shared mapping of a file this test owns, unmapped below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(file.file()),
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED);
        // SAFETY: the mapping is `len` bytes long and stays mapped while the slice is used.
        let mapped = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
        let sum = |s: &[u8]| s.iter().map(|&b| u64::from(b)).sum::<u64>();
        let before = sum(mapped);
        let released = release_mapped_pages(&root);
        assert_eq!(released, len as u64, "the mapping was found and released");
        assert_eq!(sum(mapped), before, "the data reads back the same");
        assert_eq!(mapped, &data[..]);
        assert_eq!(release_mapped_pages(&root.join("elsewhere")), 0);
        // SAFETY: unmapping the mapping made above; `mapped` is not used after this.
        unsafe { libc::munmap(ptr, len) };
    }
}
