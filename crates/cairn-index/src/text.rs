//! BM25 over records and chunks, with tantivy.
use std::collections::HashMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Mutex;

use cairn_core::{Chunk, Record, Timestamp};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, RangeQuery, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::snippet::SnippetGenerator;
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer,
    TextAnalyzer, TokenStream,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term, doc};

/// The schema's version: a change makes [`TextIndex::open`] start a fresh index, which
/// [`TextIndex::sync`] then fills from the store.
const SCHEMA_VERSION: &str = "text-3";
/// How much a match in a unit's context (author, date, framework, project) counts against a
/// match in its own words.
pub const CONTEXT_BOOST: f32 = 1.0;

const TOKENIZER: &str = "cairn";
const WRITER_MEMORY: usize = 50_000_000;
const PASSAGE_CHARS: usize = 240;

/// A text index failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// tantivy failed.
    #[error("search index: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// Reading the store failed.
    #[error(transparent)]
    Store(#[from] cairn_store::Error),
    /// A file operation on the index folder failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The query could not be used.
    #[error("bad query: {0}")]
    Query(String),
}

/// What to search for.
#[derive(Debug, Clone, Default)]
pub struct TextQuery {
    /// Words (BM25; quotes for phrases, `-word` to exclude).
    pub text: String,
    /// Only this project.
    pub project: Option<String>,
    /// Only this framework.
    pub framework: Option<String>,
    /// Results from this time on come first; the rest still follow.
    pub since: Option<Timestamp>,
    /// Results up to this time come first; the rest still follow.
    pub until: Option<Timestamp>,
    /// Leave out this session (the conversation asking).
    pub exclude_session: Option<String>,
    /// Only what happened before this time, a hard cut unlike `since` and `until`: a turn
    /// replayed at its moment sees only what was there then.
    pub before: Option<Timestamp>,
    /// At most this many records.
    pub limit: usize,
    /// How much a match in a unit's context counts (`None`: [`CONTEXT_BOOST`]).
    pub context_boost: Option<f32>,
    /// Hits without passages: the search skips the snippet of every candidate, and the
    /// caller makes the passages of those it keeps ([`TextIndex::passages`]).
    pub bare: bool,
}

impl TextQuery {
    /// A query for `text`, `limit` results, no filters.
    pub fn new(text: &str, limit: usize) -> Self {
        Self {
            text: text.to_owned(),
            limit,
            ..Self::default()
        }
    }
}

/// One record found.
#[derive(Debug, Clone, PartialEq)]
pub struct TextHit {
    /// The record.
    pub record_id: String,
    /// BM25 score of its best chunk.
    pub score: f32,
    /// The best matching passage.
    pub passage: String,
    /// Which of the record's chunks the passage comes from (0 for a record kept whole).
    pub chunk: u32,
    /// Framework.
    pub framework: String,
    /// Project identity.
    pub project: Option<String>,
    /// Session id.
    pub session_id: String,
    /// When the request was made.
    pub timestamp: Timestamp,
    /// How the turn ended.
    pub outcome: String,
    /// Whether it lies inside the query's date range (always true without one).
    pub in_range: bool,
}

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    chunk: Field,
    framework: Field,
    project: Field,
    session: Field,
    outcome: Field,
    ts: Field,
    text: Field,
    context: Field,
}

/// The BM25 index.
pub struct TextIndex {
    index: Index,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    f: Fields,
    /// The folder on disk (`None` in memory).
    dir: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for TextIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextIndex").finish_non_exhaustive()
    }
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text_opts = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let f = Fields {
        id: b.add_text_field("id", STRING | STORED),
        chunk: b.add_u64_field("chunk", STORED),
        framework: b.add_text_field("framework", STRING | STORED),
        project: b.add_text_field("project", STRING | STORED),
        session: b.add_text_field("session", STRING | STORED),
        outcome: b.add_text_field("outcome", STRING | STORED),
        ts: b.add_i64_field("ts", INDEXED | FAST | STORED),
        text: b.add_text_field("text", text_opts.clone()),
        context: b.add_text_field("context", text_opts),
    };
    b.add_text_field(SCHEMA_VERSION, STRING);
    (b.build(), f)
}

fn register_tokenizer(index: &Index) {
    let analyzer = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(64))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        // "deploys", "deployed" and "deploying" find "deploy" (English stemming).
        .filter(Stemmer::new(Language::English))
        .build();
    index.tokenizers().register(TOKENIZER, analyzer);
}

impl TextIndex {
    /// Opens the index in `dir`, creating it when missing. An index that cannot be opened
    /// (corrupt, or written with another schema) is moved aside and started afresh; the next
    /// [`TextIndex::sync`] refills it from the store.
    pub fn open(dir: &Path) -> Result<Self, Error> {
        fs_err::create_dir_all(dir)?;
        let (schema, f) = schema();
        let index = match Self::open_existing(dir, &schema) {
            Ok(Some(index)) => index,
            Ok(None) => Index::create_in_dir(dir, schema)?,
            Err(e) => {
                tracing::warn!(error = %e, dir = %dir.display(), "search index unusable; rebuilding it from the store");
                fs_err::remove_dir_all(dir)?;
                fs_err::create_dir_all(dir)?;
                Index::create_in_dir(dir, schema)?
            }
        };
        let mut opened = Self::with_index(index, f)?;
        opened.dir = Some(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()));
        Ok(opened)
    }

    /// The folder the index is kept in (canonical), or `None` for an index in memory. Its
    /// files are memory-mapped: a caller may give back the pages a search mapped in
    /// (`cairn_vectors::release_mapped_files`).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn open_existing(dir: &Path, schema: &Schema) -> Result<Option<Index>, Error> {
        if !dir.join("meta.json").exists() {
            return Ok(None);
        }
        let index = Index::open_in_dir(dir)?;
        if index.schema() != *schema {
            return Err(Error::Query(
                "the index was written with another schema".into(),
            ));
        }
        // Touch every segment once so a damaged file shows now, not at the first search.
        index.load_metas()?;
        index.searchable_segment_metas()?;
        Ok(Some(index))
    }

    /// An index held in memory (tests, benchmarks).
    pub fn in_memory() -> Result<Self, Error> {
        let (schema, f) = schema();
        Self::with_index(Index::create_in_ram(schema), f)
    }

    fn with_index(index: Index, f: Fields) -> Result<Self, Error> {
        register_tokenizer(&index);
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            index,
            reader,
            writer: Mutex::new(writer),
            f,
            dir: None,
        })
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, IndexWriter> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The store sequence number this index is complete up to.
    pub fn indexed_seq(&self) -> i64 {
        self.index
            .load_metas()
            .ok()
            .and_then(|m| m.payload)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0)
    }

    /// How many chunk documents the index holds.
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// In how many chunk documents a word occurs (after the index's own normalisation:
    /// lower case, ASCII folding). For telling distinctive words from common ones.
    pub fn doc_freq(&self, word: &str) -> u64 {
        let mut analyzer = match self.index.tokenizers().get(TOKENIZER) {
            Some(a) => a,
            None => return 0,
        };
        let mut stream = analyzer.token_stream(word);
        let Some(token) = stream.next().map(|t| t.text.clone()) else {
            return 0;
        };
        self.reader
            .searcher()
            .doc_freq(&Term::from_field_text(self.f.text, &token))
            .unwrap_or(0)
    }

    /// Whether the index holds `word`: every token it gives after the index's normalisation
    /// and stemming ("versions.tf" gives two) is in the words or the context (author, date,
    /// framework, project) of some document from at most `until` and outside
    /// `exclude_session`. Each token's look-up stops at the first document found: for asking
    /// whether a memory knows a word at all, cheaply. A word with no token is not held.
    pub fn holds_word(
        &self,
        word: &str,
        until: Option<Timestamp>,
        exclude_session: Option<&str>,
    ) -> Result<bool, Error> {
        let Some(mut analyzer) = self.index.tokenizers().get(TOKENIZER) else {
            return Ok(false);
        };
        let mut tokens: Vec<String> = Vec::new();
        let mut stream = analyzer.token_stream(word);
        while let Some(t) = stream.next() {
            if !tokens.contains(&t.text) {
                tokens.push(t.text.clone());
            }
        }
        if tokens.is_empty() {
            return Ok(false);
        }
        let searcher = self.reader.searcher();
        for token in &tokens {
            if !self.holds_token(&searcher, token, until, exclude_session)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// In how many records the words of `phrase` occur, in this order (a phrase over the
    /// records' words after the index's normalisation and stemming; one word: that word),
    /// counted up to `cap + 1` and no further: for telling a name a few records hold (a
    /// port, a helper, a flag) from one everywhere, without reading every holder. A phrase
    /// with no word is held by none.
    pub fn records_holding(&self, phrase: &str, cap: usize) -> Result<usize, Error> {
        use tantivy::query::{EnableScoring, PhraseQuery};
        use tantivy::{DocAddress, DocSet, TERMINATED};
        let Some(mut analyzer) = self.index.tokenizers().get(TOKENIZER) else {
            return Ok(0);
        };
        let f = self.f;
        let mut terms: Vec<Term> = Vec::new();
        let mut stream = analyzer.token_stream(phrase);
        while let Some(t) = stream.next() {
            terms.push(Term::from_field_text(f.text, &t.text));
        }
        let query: Box<dyn Query> = match terms.len() {
            0 => return Ok(0),
            1 => Box::new(TermQuery::new(terms.remove(0), IndexRecordOption::Basic)),
            _ => Box::new(PhraseQuery::new(terms)),
        };
        let searcher = self.reader.searcher();
        let weight = query.weight(EnableScoring::disabled_from_searcher(&searcher))?;
        let mut records: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            let alive = segment.alive_bitset();
            let mut docs = weight.scorer(segment, 1.0)?;
            let mut doc = docs.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    let address = DocAddress::new(u32::try_from(ord).unwrap_or(u32::MAX), doc);
                    let d: TantivyDocument = searcher.doc(address)?;
                    if let Some(id) = d.get_first(f.id).and_then(|v| v.as_str()) {
                        records.insert(id.to_owned());
                        if records.len() > cap {
                            return Ok(records.len());
                        }
                    }
                }
                doc = docs.advance();
            }
        }
        Ok(records.len())
    }

    /// Whether one analysed token is in a live document in reach (see [`Self::holds_word`]).
    fn holds_token(
        &self,
        searcher: &tantivy::Searcher,
        token: &str,
        until: Option<Timestamp>,
        exclude_session: Option<&str>,
    ) -> Result<bool, Error> {
        use tantivy::query::EnableScoring;
        use tantivy::{DocSet, TERMINATED};
        let f = self.f;
        let term = |field: Field| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_text(field, token),
                IndexRecordOption::Basic,
            ))
        };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(
            Occur::Must,
            Box::new(BooleanQuery::new(vec![
                (Occur::Should, term(f.text)),
                (Occur::Should, term(f.context)),
            ])),
        )];
        if let Some(s) = exclude_session {
            clauses.push((
                Occur::MustNot,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.session, s),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        let query = BooleanQuery::new(clauses);
        let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
        // The time is read from the fast field of each document the word is in, stopping at
        // the first one in reach: a range query would read the whole column for every word.
        let until = until.map(|t| t.timestamp_millis());
        for segment in searcher.segment_readers() {
            let mut docs = weight.scorer(segment, 1.0)?;
            let alive = segment.alive_bitset();
            let ts = match until {
                Some(_) => Some(segment.fast_fields().i64("ts")?),
                None => None,
            };
            let mut doc = docs.doc();
            while doc != TERMINATED {
                let in_time = match (&ts, until) {
                    (Some(column), Some(until)) => column.first(doc).is_some_and(|t| t <= until),
                    _ => true,
                };
                if in_time && alive.is_none_or(|a| a.is_alive(doc)) {
                    return Ok(true);
                }
                doc = docs.advance();
            }
        }
        Ok(false)
    }

    /// Replaces a record's documents with its current text, one per chunk.
    pub fn put(&self, record: &Record, chunks: &[Chunk]) -> Result<(), Error> {
        let f = self.f;
        let rec = &record.record;
        let writer = self.writer();
        writer.delete_term(Term::from_field_text(f.id, rec.id.as_str()));
        let context = crate::unit::context(rec);
        let whole = [(0u32, rec.text.as_str())];
        let pieces: Vec<(u32, &str)> = if chunks.is_empty() {
            whole.to_vec()
        } else {
            chunks.iter().map(|c| (c.ord, c.text.as_str())).collect()
        };
        for (ord, text) in pieces {
            let mut d = doc!(
                f.id => rec.id.as_str(),
                f.chunk => u64::from(ord),
                f.framework => rec.framework.as_str(),
                f.session => rec.session_id.as_str(),
                f.outcome => rec.outcome.as_str(),
                f.ts => rec.started_at.timestamp_millis(),
                f.text => text,
                f.context => context.as_str(),
            );
            if let Some(p) = &rec.project {
                d.add_text(f.project, p);
            }
            writer.add_document(d)?;
        }
        Ok(())
    }

    /// Removes a record's (or an item's) documents; searchable after the next commit.
    pub fn remove(&self, id: &str) {
        self.writer()
            .delete_term(Term::from_field_text(self.f.id, id));
    }

    /// Makes what was put searchable, and records that the index is complete up to `seq`.
    pub fn commit(&self, seq: i64) -> Result<(), Error> {
        {
            let mut writer = self.writer();
            let mut prepared = writer.prepare_commit()?;
            prepared.set_payload(&seq.to_string());
            prepared.commit()?;
        }
        self.reader.reload()?;
        Ok(())
    }

    /// Brings the index up to date with the store: every record stored after
    /// [`TextIndex::indexed_seq`]. Returns how many records were indexed.
    pub async fn sync(&self, store: &cairn_store::Store) -> Result<u64, Error> {
        let mut after = self.indexed_seq();
        let mut n = 0;
        loop {
            let page = store.records_page(after, 500).await?;
            let Some(last) = page.last().map(|(r, _)| r.seq) else {
                break;
            };
            for (rec, chunks) in &page {
                self.put(rec, chunks)?;
            }
            n += page.len() as u64;
            self.commit(last)?;
            after = last;
        }
        Ok(n)
    }

    /// Removes everything (Clear) and frees the files that held it.
    pub fn clear(&self) -> Result<(), Error> {
        {
            let mut writer = self.writer();
            writer.delete_all_documents()?;
            let mut prepared = writer.prepare_commit()?;
            prepared.set_payload("0");
            prepared.commit()?;
            // Deleted segments' files go now, not at some later merge.
            let gc = writer.garbage_collect_files();
            futures_block_on(gc)?;
        }
        self.reader.reload()?;
        Ok(())
    }

    /// The query's words as the index reads them. A field with no weight is not searched at
    /// all (a zero boost would still match).
    fn words(&self, q: &TextQuery, text: &str) -> Box<dyn Query> {
        let context = q.context_boost.unwrap_or(CONTEXT_BOOST);
        let mut fields = vec![self.f.text];
        if context > 0.0 {
            fields.push(self.f.context);
        }
        let mut parser = QueryParser::for_index(&self.index, fields);
        parser.set_field_boost(self.f.context, context);
        parser.parse_query_lenient(text).0
    }

    /// What makes the passages of a [`TextQuery::bare`] search's hits from their chunks'
    /// text: the same passages the search would have given.
    pub fn passages(&self, q: &TextQuery) -> Result<Passages, Error> {
        let searcher = self.reader.searcher();
        let words = self.words(q, q.text.trim());
        let mut snippets = SnippetGenerator::create(&searcher, &*words, self.f.text)?;
        snippets.set_max_num_chars(PASSAGE_CHARS);
        Ok(Passages(snippets))
    }

    /// Searches: one hit per record with its best passage, best first. With a date range,
    /// records inside it come first and the rest follow.
    pub fn search(&self, q: &TextQuery) -> Result<Vec<TextHit>, Error> {
        let limit = q.limit.clamp(1, 1000);
        let text = q.text.trim();
        if text.is_empty() {
            return Err(Error::Query("the query is empty".into()));
        }
        let searcher = self.reader.searcher();
        let words = self.words(q, text);
        let f = self.f;
        let mut filters: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, words.box_clone())];
        if let Some(p) = &q.project {
            filters.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.project, p),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        if let Some(fw) = &q.framework {
            filters.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.framework, fw),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        if let Some(before) = q.before {
            filters.push((
                Occur::Must,
                Box::new(RangeQuery::new(
                    Bound::Unbounded,
                    Bound::Excluded(Term::from_field_i64(f.ts, before.timestamp_millis())),
                )),
            ));
        }
        if let Some(s) = &q.exclude_session {
            filters.push((
                Occur::MustNot,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.session, s),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        let base = BooleanQuery::new(filters.iter().map(|(o, q)| (*o, q.box_clone())).collect());
        let has_range = q.since.is_some() || q.until.is_some();
        let mut hits: Vec<TextHit> = Vec::new();
        if has_range {
            let lower = q.since.map_or(Bound::Unbounded, |t| {
                Bound::Included(Term::from_field_i64(f.ts, t.timestamp_millis()))
            });
            let upper = q.until.map_or(Bound::Unbounded, |t| {
                Bound::Included(Term::from_field_i64(f.ts, t.timestamp_millis()))
            });
            let mut ranged = filters
                .iter()
                .map(|(o, q)| (*o, q.box_clone()))
                .collect::<Vec<_>>();
            ranged.push((Occur::Must, Box::new(RangeQuery::new(lower, upper))));
            hits = self.collect(
                &searcher,
                &BooleanQuery::new(ranged),
                &*words,
                limit,
                true,
                q.bare,
            )?;
        }
        if hits.len() < limit {
            let seen: std::collections::HashSet<String> =
                hits.iter().map(|h| h.record_id.clone()).collect();
            let rest = self.collect(
                &searcher,
                &base,
                &*words,
                limit + seen.len(),
                !has_range,
                q.bare,
            )?;
            hits.extend(
                rest.into_iter()
                    .filter(|h| !seen.contains(&h.record_id))
                    .take(limit - hits.len()),
            );
        }
        Ok(hits)
    }

    /// A record's metadata and the whole text of one of its chunks (`ord`), or of its first
    /// one when `ord` is `None` or names no chunk of it. For hits that come from the dense
    /// index only, and for what the re-ranker reads.
    pub fn record_chunk(&self, id: &str, ord: Option<u32>) -> Result<Option<TextHit>, Error> {
        let f = self.f;
        let searcher = self.reader.searcher();
        let q = TermQuery::new(Term::from_field_text(f.id, id), IndexRecordOption::Basic);
        let top = searcher.search(&q, &TopDocs::with_limit(1000))?;
        let mut best: Option<(u64, TantivyDocument)> = None;
        for (_, addr) in top {
            let d: TantivyDocument = searcher.doc(addr)?;
            let chunk = d.get_first(f.chunk).and_then(|v| v.as_u64()).unwrap_or(0);
            let wanted = ord.map(u64::from);
            // The chunk asked for; failing that, the first one.
            let better = match &best {
                None => true,
                Some((c, _)) if wanted == Some(*c) => false,
                Some(_) if wanted == Some(chunk) => true,
                Some((c, _)) => chunk < *c,
            };
            if better {
                best = Some((chunk, d));
            }
        }
        Ok(best.map(|(chunk, d)| {
            let get = |field: Field| {
                d.get_first(field)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            };
            let ts = d.get_first(f.ts).and_then(|v| v.as_i64()).unwrap_or(0);
            let text = get(f.text).unwrap_or_default();
            TextHit {
                record_id: id.to_owned(),
                score: 0.0,
                passage: text,
                chunk: u32::try_from(chunk).unwrap_or(u32::MAX),
                framework: get(f.framework).unwrap_or_default(),
                project: get(f.project),
                session_id: get(f.session).unwrap_or_default(),
                timestamp: chrono::DateTime::from_timestamp_millis(ts).unwrap_or_default(),
                outcome: get(f.outcome).unwrap_or_default(),
                in_range: true,
            }
        }))
    }

    fn collect(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        words: &dyn Query,
        limit: usize,
        in_range: bool,
        bare: bool,
    ) -> Result<Vec<TextHit>, Error> {
        let f = self.f;
        // Several chunks of one record may match: over-fetch, keep each record's best.
        let top = searcher.search(query, &TopDocs::with_limit(limit * 4 + 10))?;
        let snippets = if bare {
            None
        } else {
            let mut s = SnippetGenerator::create(searcher, words, f.text)?;
            s.set_max_num_chars(PASSAGE_CHARS);
            Some(Passages(s))
        };
        let mut best: HashMap<String, usize> = HashMap::new();
        let mut out: Vec<TextHit> = Vec::new();
        for (score, addr) in top {
            let d: TantivyDocument = searcher.doc(addr)?;
            let get = |field: Field| {
                d.get_first(field)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            };
            let Some(id) = get(f.id) else { continue };
            if best.contains_key(&id) {
                continue;
            }
            if out.len() >= limit {
                break;
            }
            let passage = match &snippets {
                Some(p) => p.of(&get(f.text).unwrap_or_default()),
                None => String::new(),
            };
            let ts = d.get_first(f.ts).and_then(|v| v.as_i64()).unwrap_or(0);
            let chunk = d.get_first(f.chunk).and_then(|v| v.as_u64()).unwrap_or(0);
            best.insert(id.clone(), out.len());
            out.push(TextHit {
                record_id: id,
                score,
                passage,
                chunk: u32::try_from(chunk).unwrap_or(u32::MAX),
                framework: get(f.framework).unwrap_or_default(),
                project: get(f.project),
                session_id: get(f.session).unwrap_or_default(),
                timestamp: chrono::DateTime::from_timestamp_millis(ts).unwrap_or_default(),
                outcome: get(f.outcome).unwrap_or_default(),
                in_range,
            });
        }
        Ok(out)
    }
}

/// Makes a search's passages: the best window of a chunk's text for the query's words, or the
/// text's start when none of them is in it.
pub struct Passages(SnippetGenerator);

impl Passages {
    /// The passage of one chunk's whole text.
    pub fn of(&self, text: &str) -> String {
        let passage = self.0.snippet(text).fragment().trim().to_owned();
        if passage.is_empty() {
            text.chars().take(PASSAGE_CHARS).collect()
        } else {
            passage
        }
    }
}

/// Runs a future that needs no runtime of its own (tantivy's garbage collection future)
/// to completion on this thread.
fn futures_block_on<F: std::future::Future>(fut: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(std::sync::Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}
