import { describe, expect, it } from "vitest";
import { ApiError } from "./api-error";
import {
  actionLabel,
  authorLabel,
  notePathProblem,
  openByIdProblem,
  parseScopeKey,
  projectScope,
  redactionLabel,
  refIn,
  refOf,
  sameRef,
  scopeKey,
  scopeOf,
  scopeOptions,
  USER_SCOPE,
} from "./notes";

describe("scopes", () => {
  it("round-trips scope keys", () => {
    expect(scopeKey(USER_SCOPE)).toBe("user");
    expect(scopeKey(projectScope("github.com/acme/app"))).toBe("project:github.com/acme/app");
    expect(parseScopeKey("user")).toEqual(USER_SCOPE);
    expect(parseScopeKey("project:/home/dev/a:b")).toEqual({ scope: "project", project: "/home/dev/a:b" });
    expect(parseScopeKey("project:")).toBeNull();
    expect(parseScopeKey("other")).toBeNull();
  });

  it("lists You first, then every project once, by identity, told apart when names clash", () => {
    expect(scopeOptions(["/home/dev/b/app", "github.com/acme/site", "/home/dev/a/app"], ["github.com/acme/site", " ", "/x/tool"])).toEqual([
      { key: "user", label: "You", title: "Your notes, visible in every project" },
      { key: "project:/home/dev/a/app", label: "/home/dev/a/app", title: "/home/dev/a/app" },
      { key: "project:/home/dev/b/app", label: "/home/dev/b/app", title: "/home/dev/b/app" },
      { key: "project:/x/tool", label: "tool", title: "/x/tool" },
      { key: "project:github.com/acme/site", label: "github.com/acme/site", title: "github.com/acme/site" },
    ]);
  });
});

describe("opening a note by its id", () => {
  it("finds the scope a note lives in", () => {
    expect(scopeOf({ scope: "user", project: null })).toEqual(USER_SCOPE);
    expect(scopeOf({ scope: "user", project: "stray" })).toEqual(USER_SCOPE);
    expect(scopeOf({ scope: "project", project: "github.com/acme/app" })).toEqual(projectScope("github.com/acme/app"));
  });

  it("says why an id could not be opened", () => {
    expect(openByIdProblem("n_gone", new ApiError("not_found", 'no note has the id "n_gone"'))).toBe(
      "No note has the id n_gone: it may have been deleted.",
    );
    expect(openByIdProblem("zzz", new ApiError("bad_request", "not an id"))).toBe("zzz is not a note id (note ids start with n_).");
    expect(openByIdProblem("r_1", null)).toBe("The id r_1 names a conversation turn, not a note.");
    expect(openByIdProblem("n_1", new ApiError("internal", "disk on fire"))).toBe("Could not open the note n_1: disk on fire");
  });
});

describe("note references", () => {
  it("drops the project for user notes and compares by scope, project and path", () => {
    expect(refOf({ scope: "user", project: "stray", path: "a.md" })).toEqual({ scope: "user", project: null, path: "a.md" });
    expect(refIn(projectScope("p"), "a.md")).toEqual({ scope: "project", project: "p", path: "a.md" });
    expect(sameRef(refIn(projectScope("p"), "a.md"), refIn(projectScope("p"), "a.md"))).toBe(true);
    expect(sameRef(refIn(projectScope("p"), "a.md"), refIn(projectScope("q"), "a.md"))).toBe(false);
    expect(sameRef(refIn(USER_SCOPE, "a.md"), refIn(projectScope("p"), "a.md"))).toBe(false);
  });

  it("accepts relative paths with folders and explains what it refuses", () => {
    expect(notePathProblem("conventions.md")).toBeNull();
    expect(notePathProblem("db/migrations.md")).toBeNull();
    for (const bad of ["", "  ", "/abs.md", "C:/x.md", "a\\b.md", "dir/", "a//b.md", "../up.md", "a/./b.md", "a\u0000b"]) {
      expect(notePathProblem(bad), JSON.stringify(bad)).not.toBeNull();
    }
  });
});

describe("version labels", () => {
  it("names actions and authors", () => {
    expect(actionLabel("create")).toBe("Created");
    expect(actionLabel("restore")).toBe("Restored");
    expect(actionLabel("merge")).toBe("merge");
    expect(authorLabel("user")).toBe("you");
    expect(authorLabel("agent:claude-code")).toBe("Claude Code (agent)");
    expect(authorLabel("agent:new-thing")).toBe("new-thing (agent)");
    expect(authorLabel("cli")).toBe("cli");
  });

  it("says who redacted a version and when", () => {
    expect(redactionLabel({ redacted_at: null, redacted_by: null })).toBeNull();
    const label = redactionLabel({ redacted_at: "2026-03-01T10:02:00Z", redacted_by: "user" });
    expect(label).toMatch(/^redacted by you at /);
    expect(label).toContain("2026");
  });
});
