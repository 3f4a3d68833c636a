#!/usr/bin/env python3
"""Generates Cairn's own labelled set for the turn note's ranker: synthetic coding-agent
histories (one developer's few months across projects and agent frameworks) with later
requests that need, or do not need, an earlier turn.

    python3 data/ranker/generate.py > data/ranker/histories.json
    python3 data/ranker/generate.py --out data/ranker/histories.json --stats [--seed 20260512] [--samples 20]
    python3 data/ranker/generate.py --measure FILE      # statistics of an existing file

Python 3 standard library only; the same seed gives the same bytes. The output has
LoCoMo's shape (a list of samples with `conversation` and `qa`) so the same loader and
evaluation read both, plus `tools` on agent turns (what the agent ran, and its output);
see data/ranker/README.md for the fields and the labels.

The set is built so that a ranker cannot tell evidence from filler by anything but
relevance: record lengths (the request, tool steps and answer, as capture builds a record)
are drawn from one distribution for both, facts are planted across the whole history, and
requests come in many wordings. `--stats` prints the evidence-against-filler distances.
"""

import argparse
import datetime as dt
import json
import random
import re
import sys

WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")

FRAMEWORKS = ["claude-code", "codex", "gemini-cli", "cursor", "opencode"]

ORGS = ["acme", "northwind", "lumen-labs", "kestrel-io", "tallgrass", "brightpath", "orbitwise",
        "fernhill", "quarry-tech", "saltmarsh", "bluefin-data", "copperleaf", "redwood-ops",
        "ironbark", "mosaic-health", "pinecrest", "harborline", "stackyard", "vantage-ai",
        "glasswing"]
USERS = ["mkowalski", "jdiaz", "priya-r", "tnakamura", "lfontaine", "okafor-dev", "sbergstrom",
         "aliyu", "hchen", "rmurphy", "eivanova", "dpatel", "cmoreau", "kbauer", "ysato",
         "fmartins", "gwright", "nabdullah", "vrossi", "ajensen"]

# ---------------------------------------------------------------------------------------
# Stacks: repository names, everyday files and commands, filler exchanges, planted facts.
# In every text, {name} slots are filled per instance; a fact's slots are drawn once and
# shared by its planted turns and its later requests.
# A planted turn whose speaker ends in "*" is evidence for the fact's requests.
# ---------------------------------------------------------------------------------------

STACKS = {}

STACKS["python"] = {
    "repos": ["billing-api", "invoice-service", "claims-api", "payments-gateway", "quote-engine"],
    "files": ["app/main.py", "app/routes/invoices.py", "app/db.py", "app/models.py",
              "app/services/tax.py", "tests/test_invoices.py", "app/schemas.py", "app/deps.py"],
    "funcs": ["create_invoice", "apply_discount", "get_customer", "compute_tax", "list_payments",
              "refund_payment", "send_receipt"],
    "filler": [
        [("user", "add type hints to {func} in {file}"),
         ("agent", "Added hints to `{func}` ({file}): parameters and the return type, plus `from __future__ import annotations` at the top. mypy is clean on that file.")],
        [("user", "rename the `cust` variable in {func} to `customer`, it's unreadable"),
         ("agent", "Renamed `cust` to `customer` in `{func}` (7 occurrences in {file}). Tests still pass: 84 passed in 6.1s.")],
        [("user", "write a test for {func} when the amount is zero"),
         ("agent", "Added `test_{func}_zero_amount` to tests/test_invoices.py. It asserts a 422 with `amount must be positive`. Passing.")],
        [("user", "why is this endpoint slow? {file}"),
         ("agent", "The handler loads every line item with a separate query (N+1). I switched it to `selectinload(Invoice.lines)`; the test that lists 200 invoices went from 1.9s to 0.2s.")],
        [("user", "can you explain what the deps.py get_session thing does"),
         ("agent", "`get_session` is a FastAPI dependency that opens an `AsyncSession`, yields it to the route, and closes it afterwards; a route that raises makes it roll back. Each request gets its own session.")],
        [("user", "add a docstring to {func}"),
         ("agent", "Done: a short summary, the arguments and the exceptions it raises (`InvoiceNotFound`, `ValidationError`).")],
        [("user", "the linter is complaining about line length in {file}"),
         ("agent", "ruff flagged E501 on 4 lines; I wrapped them. `ruff check .` is clean now.")],
        [("user", "make {func} return a 404 instead of 500 when the customer doesn't exist"),
         ("agent", "It now raises `HTTPException(status_code=404, detail=\"customer not found\")`. Added a test for it; 85 passed.")],
        [("user", "what does this regex in app/services/tax.py do? r\"^[A-Z]{{2}}\\d{{8,12}}$\""),
         ("agent", "It matches an EU-style VAT number: two capital letters (the country) then 8 to 12 digits, nothing else on the line.")],
        [("user", "log the request id in every log line"),
         ("agent", "Added a middleware that reads `X-Request-ID` (or makes a uuid4) and puts it in a `contextvars` var; the logging formatter prints it as `rid=`. Updated app/main.py and app/logging.py.")],
        [("user", "add pagination to the list endpoint"),
         ("agent", "The list route takes `limit` (default 50, max 200) and `cursor` (the last id seen) and returns `next_cursor`. Keyset pagination, so it stays fast on big tables.")],
        [("user", "remove the unused imports across the app package"),
         ("agent", "`ruff check --select F401 --fix app/` removed 11 unused imports in 6 files. Tests pass.")],
    ],
    "new_topics": [
        "add an endpoint that exports invoices as CSV for a date range",
        "write a pydantic model for the webhook payload Stripe sends on refunds",
        "make the tax rate table configurable per country",
        "add a healthcheck route that also pings the database",
        "can you sketch a retry decorator with exponential backoff for the SMTP client",
        "turn the discount logic into a strategy class, it has too many ifs",
        "add request validation so the currency must be a 3-letter ISO code",
        "generate an OpenAPI example for the create invoice request",
        "write a fixture that builds a customer with three invoices",
        "rate-limit the public quote endpoint to 20 requests a minute per key",
    ],
    "facts": [
        {"key": "py-sentry-noise",
         "slots": {"rate": ["0.1", "0.05", "0.2"]},
         "plant": [[("user", "we blew through the Sentry quota in two days"),
                    ("agent*", "Every 404 and every client disconnect was reported as an error. sentry_sdk.init now has `traces_sample_rate={rate}` and a `before_send` that drops `HTTPException` with status < 500 and `ClientDisconnect`. Real 500s still go through.")]],
         "need": ["the error tracker is flooded with not-found events again",
                  "what fraction of requests do we trace?",
                  "add sentry to the worker process with the same settings"],
         "near": ["add a custom tag with the customer id to error reports"]},
        {"key": "py-async-session",
         "slots": {"fn": ["send_receipt", "refund_payment"]},
         "plant": [[("user", "`sqlalchemy.exc.MissingGreenlet: greenlet_spawn has not been called` in {fn}"),
                    ("agent*", "`{fn}` touched `invoice.customer` after the request's session closed, which triggers a lazy load outside the async context. Fixed with `selectinload(Invoice.customer)` in the query. The rule we set: relationships are `lazy=\"raise\"` on the models so this fails loudly in tests instead of in prod.")]],
         "need": ["the greenlet error is back in the receipts task",
                  "accessing a relationship in a background task crashes, why?",
                  "add the customer's address to the refund email"],
         "near": ["make the database pool size configurable"]},
        {"key": "py-secrets",
         "slots": {"path": ["billing/prod/app", "claims/prod/api"], "tool": ["AWS Secrets Manager", "Doppler"]},
         "plant": [[("user", "where do the production API keys live?"),
                    ("agent*", "In {tool} under `{path}`; the container reads them at start (app/settings.py loads them into env). Nothing secret goes in .env files in the repo — .env.example only has placeholders.")]],
         "need": ["add the new tax provider's API key for production",
                  "rotate the stripe key in prod",
                  "where should I put the SMTP password?"],
         "near": ["add a setting for the default currency"]},
        {"key": "py-deploy-staging",
         "slots": {"cluster": ["billing-staging", "apps-stg"], "env": ["staging", "stg"]},
         "plant": [[("user", "how do we get a build onto staging?"),
                    ("agent*", "Staging deploys are tag-driven: `make release-{env}` tags the current commit `{env}-YYYYMMDD-N` and pushes the tag; the `deploy` workflow builds the image and rolls the ECS service in the `{cluster}` cluster. No manual `aws ecs update-service`.")],
                   [("user", "the staging deploy went out but the new endpoint 500s, relation does not exist"),
                    ("agent*", "The deploy does not migrate. Migrations run separately before tagging: `make migrate ENV={env}` (it needs the VPN, it runs alembic against the staging database with the migrator role). I ran it; the endpoint works now.")]],
         "need": ["ship this branch to staging, it has a new table",
                  "put the refunds change on staging so QA can try it",
                  "what are all the steps to get a schema change deployed to staging?"],
         "near": ["the production deploy is slow, can we cache the docker layers?"]},
        {"key": "py-alembic-heads",
         "slots": {"rev": ["3f2a9c1d0b7e", "9b7e44a0c2d1", "c01d5e88f4a3"], "table": ["refunds", "credit_notes", "payouts"]},
         "plant": [[("user", "alembic upgrade head blows up: `FAILED: Multiple head revisions are present for given argument 'head'`"),
                    ("agent*", "Two migrations both have `down_revision = '{rev}'` — yours adding `{table}` and one that came in from main. I ran `alembic merge -m \"merge heads\" heads`, which wrote a merge revision, and `alembic upgrade head` works again. This will happen every time two branches each add a migration: after rebasing, run `alembic heads` and merge if there are two.")]],
         "need": ["the db migrate step fails again after I pulled main, it says there is more than one head",
                  "CI's migration job errors with several head revisions, what did we do last time to fix that?",
                  "I rebased and now upgrading the schema refuses to run, something about heads",
                  "alembic is confused about which revision is latest again"],
         "near": ["write a migration that adds an index on {table}.created_at",
                  "how do I roll back just the last alembic migration locally?"]},
        {"key": "py-pydantic-pin",
         "slots": {"ver": ["1.10.13", "1.10.14", "1.10.12"], "fa": ["0.95.2", "0.96.1", "0.94.0"]},
         "plant": [[("user", "dependabot wants to bump pydantic to 2.x, should we take it?"),
                    ("agent*", "Not yet. We are on fastapi {fa}, which only supports pydantic v1; with 2.x the app fails at import (`PydanticImportError: BaseSettings has been moved to pydantic-settings`). I pinned `pydantic = \"=={ver}\"` in pyproject.toml and closed the dependabot PR with a note. The upgrade should come together with a fastapi bump to 0.100+.")]],
         "need": ["let's upgrade pydantic, the new validators look nice",
                  "why are we stuck on an old pydantic? can we move to v2 now?",
                  "dependabot opened another PR for the validation library, merge it?",
                  "I want to use model_validator from pydantic in the schemas"],
         "near": ["write a pydantic validator that strips whitespace from the customer name",
                  "how do I make a pydantic field optional with a default of an empty list?"]},
        {"key": "py-test-db",
         "slots": {"port": ["5433", "55432", "5434"], "db": ["billing_test", "claims_test", "quotes_test"]},
         "plant": [[("user", "how do I run the integration tests? they all fail with connection refused"),
                    ("agent*", "They need their own Postgres: `docker compose -f docker-compose.test.yml up -d db` starts it on port {port} (not 5432, to avoid clashing with a local Postgres), then `TEST_DATABASE_URL=postgresql+asyncpg://postgres:postgres@localhost:{port}/{db} pytest -m integration`. The conftest creates and drops the schema per session.")]],
         "need": ["run the integration suite for me",
                  "the db tests all error with connection refused, what am I missing?",
                  "what's the database URL the integration tests expect?",
                  "spin up whatever the slow tests need and run them"],
         "near": ["add a unit test for compute_tax with a negative amount",
                  "the unit tests are slow, can we run them in parallel with pytest-xdist?"]},
        {"key": "py-uvicorn-reload",
         "slots": {"dir": ["app", "src/app"]},
         "plant": [[("user", "uvicorn --reload keeps restarting in a loop every second"),
                    ("agent*", "It watches the whole repo, including `.venv` and the coverage files pytest writes, so every test run retriggers it. Start it with `uvicorn app.main:app --reload --reload-dir {dir}`; I put that in the Makefile's `dev` target.")]],
         "need": ["the dev server keeps reloading nonstop again",
                  "why does the local server restart by itself every time I run tests?",
                  "start the api locally in watch mode"],
         "near": ["add gzip compression to the FastAPI app",
                  "how many uvicorn workers should we run in production?"]},
        {"key": "py-decimal-money",
         "slots": {"field": ["amount", "total", "unit_price"]},
         "plant": [[("user", "the totals are off by a cent on some invoices"),
                    ("agent*", "Money was going through `float`: 0.1 + 0.2 style errors, then rounding. We decided to keep every amount as `Decimal` end to end — `Numeric(12, 2)` columns, `condecimal(max_digits=12, decimal_places=2)` in the schemas, and `quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN)` only when displaying. Never `float({field})`.")]],
         "need": ["add a discount_amount field to the invoice schema",
                  "a customer says their total is one cent higher than expected",
                  "what type should I use for the new fee column?",
                  "sum the line prices for the summary endpoint"],
         "near": ["format the invoice date as ISO 8601 in the response",
                  "add a currency field to the customer model"]},
        {"key": "py-celery-broker",
         "slots": {"host": ["redis-queue.internal", "cache-02.internal", "broker.svc.local"], "db": ["2", "3", "5"]},
         "plant": [[("user", "where do the celery workers get their broker from?"),
                    ("agent*", "From `CELERY_BROKER_URL` in the environment; in staging and prod it is `redis://{host}:6379/{db}` (database {db}, because 0 is the cache). Locally it falls back to `redis://localhost:6379/{db}` from app/settings.py.")]],
         "need": ["the worker can't connect to the queue in staging, what should the URL be?",
                  "which redis database do the background jobs use?",
                  "set up a second worker pool that reads from the same broker"],
         "near": ["add a celery task that emails the monthly statement",
                  "how do I see which celery tasks failed yesterday?"]},
        {"key": "py-ruff-config",
         "slots": {"len": ["100", "110", "120"]},
         "plant": [[("user", "black and flake8 keep fighting over the same lines"),
                    ("agent*", "I replaced both with ruff: `ruff format` for formatting and `ruff check` for lint, configured in pyproject.toml with `line-length = {len}` and `select = [\"E\", \"F\", \"I\", \"B\", \"UP\"]`. Removed .flake8 and the black pre-commit hook.")]],
         "need": ["set up the formatter in the new service the same way as here",
                  "what line length do we use?",
                  "add the lint hook to pre-commit"],
         "near": ["fix the type error mypy reports in app/schemas.py",
                  "format this SQL query so it's readable"]},
        {"key": "py-timezone",
         "slots": {"tz": ["Europe/Berlin", "America/Chicago", "Europe/Madrid"]},
         "plant": [[("user", "invoices created just before midnight show up in the wrong month"),
                    ("agent", "The period is computed with `date.today()`, which is the server's date in UTC."),
                    ("user*", "our accounting is done in {tz}, months close at local midnight there"),
                    ("agent*", "Then the period must use that zone: I added `ACCOUNTING_TZ = ZoneInfo(\"{tz}\")` in app/settings.py and the period is `created_at.astimezone(ACCOUNTING_TZ).date()`. Timestamps stay stored in UTC.")]],
         "need": ["the monthly report is missing invoices from the last evening of the month",
                  "which timezone should the statement cutoff use?",
                  "add a quarterly report grouped by accounting period"],
         "near": ["store the customer's preferred language",
                  "convert this timestamp string to a datetime"]},
        {"key": "py-poetry-uv",
         "slots": {"pyver": ["3.12", "3.11"]},
         "plant": [[("user", "installing deps takes forever in CI"),
                    ("agent*", "We moved from poetry to uv: `uv sync --frozen` in CI (uv.lock is committed), Python {pyver} from `uv python install {pyver}`. Install went from ~3 minutes to 14 seconds. Locally: `uv run pytest`, `uv add <pkg>` instead of `poetry add`.")]],
         "need": ["add httpx as a dependency",
                  "how do I install the project locally after a fresh clone?",
                  "which python version does this repo use?"],
         "near": ["why is the docker image 1.2 GB?",
                  "what does the `--frozen` flag mean for npm?"]},
        {"key": "py-stripe-webhook",
         "slots": {"secret": ["STRIPE_WEBHOOK_SECRET", "STRIPE_SIGNING_SECRET"]},
         "plant": [[("user", "stripe webhooks return 400 `No signatures found matching the expected signature for payload`"),
                    ("agent*", "The route parsed the JSON body before verifying it, so the bytes differed from what Stripe signed. It now passes `await request.body()` (raw bytes) to `stripe.Webhook.construct_event(payload, sig_header, settings.{secret})`. Also: locally, `stripe listen` prints its own signing secret; the dashboard one only works for the deployed endpoint.")]],
         "need": ["webhook signature verification is failing again in local testing",
                  "stripe events are rejected with a 400 on my machine",
                  "add a handler for invoice.paid events"],
         "near": ["create a stripe customer when a user signs up",
                  "how do I refund half a payment with the stripe API?"]},
    ],
}

STACKS["rust"] = {
    "repos": ["logslice", "tracewalk", "kvsnap", "mdlint-rs", "shardctl"],
    "files": ["src/main.rs", "src/cli.rs", "src/parse.rs", "src/index.rs", "src/store/mod.rs",
              "tests/cli.rs", "src/config.rs", "Cargo.toml"],
    "funcs": ["parse_line", "open_store", "merge_segments", "read_config", "compact", "scan_dir",
              "render_table"],
    "filler": [
        [("user", "clippy says `needless_borrow` in {file}"),
         ("agent", "Removed the extra `&` on 3 calls in {file}; `cargo clippy --all-targets -- -D warnings` is clean.")],
        [("user", "add a --json flag to the list command"),
         ("agent", "Added `#[arg(long)] json: bool` to `ListArgs` in src/cli.rs; with it the command prints one JSON object per line via serde_json. Added a test in tests/cli.rs.")],
        [("user", "make {func} return a Result instead of panicking"),
         ("agent", "`{func}` now returns `Result<_, Error>` and the `unwrap()`s became `?` with context (`.with_context(|| format!(\"reading {{}}\", path.display()))`). Callers updated.")],
        [("user", "what's the difference between iter() and into_iter() here"),
         ("agent", "`iter()` borrows the vector and yields `&T`; `into_iter()` on an owned `Vec` moves it and yields `T`. In {func} you consume the vector afterwards anyway, so `into_iter()` avoids the clones.")],
        [("user", "write a unit test for {func} with an empty input"),
         ("agent", "Added `#[test] fn {func}_empty()` in {file}; it expects `Ok(vec![])`. `cargo test {func}` → 1 passed.")],
        [("user", "bump the version to the next minor"),
         ("agent", "Cargo.toml version 0.4.2 → 0.5.0 and CHANGELOG.md has a new 0.5.0 heading with the three merged changes.")],
        [("user", "the progress bar flickers in {func}"),
         ("agent", "It was redrawn on every item; I set `ProgressBar::set_draw_target(ProgressDrawTarget::stderr_with_hz(10))` so it redraws at most 10 times a second.")],
        [("user", "add doc comments to the public functions in {file}"),
         ("agent", "Added `///` docs to 6 public items in {file}, with an example on `{func}`. `cargo doc --no-deps` builds without warnings.")],
        [("user", "why does this borrow not live long enough?"),
         ("agent", "The `&str` points into `line`, which is dropped at the end of each loop iteration, but you push it into `out` that outlives the loop. Push `line.to_string()` (or keep the lines alive in a Vec first).")],
        [("user", "make the error message nicer when the file doesn't exist"),
         ("agent", "It now prints `error: cannot open {{path}}: No such file or directory` and exits with code 2, instead of the Debug dump.")],
        [("user", "replace the manual arg parsing with clap derive"),
         ("agent", "src/cli.rs now has a `#[derive(Parser)] struct Cli` with subcommands; `--help` output is generated. Removed 80 lines of hand parsing.")],
    ],
    "new_topics": [
        "add a `stats` subcommand that prints line counts per level",
        "support reading gzip-compressed input files",
        "write a benchmark for parse_line with criterion",
        "make the output colored when stdout is a terminal",
        "add shell completion generation for bash and zsh",
        "implement a --since flag that takes a relative time like 2h",
        "port the config file from TOML to YAML too",
        "add a man page to the release build",
        "parallelize scan_dir with rayon",
        "add a --limit flag to the search subcommand",
    ],
    "facts": [
        {"key": "rs-windows-paths",
         "slots": {"crate": ["dunce", "path-slash"]},
         "plant": [[("user", "a user on windows says paths print as `\\\\?\\C:\\...`"),
                    ("agent*", "`canonicalize` returns verbatim UNC paths on Windows. We now use `{crate}::canonicalize` for display and compare paths after normalising; the windows-latest CI job has a test for it.")]],
         "need": ["the windows output shows weird prefixes on file names",
                  "canonicalize the input directory before scanning it"],
         "near": ["make the CLI work with paths that contain spaces"]},
        {"key": "rs-feature-flags",
         "slots": {"feat": ["s3", "parquet", "http"]},
         "plant": [[("user", "compile times are getting bad"),
                    ("agent*", "Most of it was the AWS SDK. The `{feat}` support is now behind a cargo feature (off by default): `cargo build --features {feat}`. CI builds both with and without; tests for it are `#[cfg(feature = \"{feat}\")]`.")]],
         "need": ["the {feat} tests don't seem to run",
                  "build the version that can talk to {feat}",
                  "add a new backend that uses the aws sdk"],
         "near": ["enable lto for release builds"]},
        {"key": "rs-release",
         "slots": {"tool": ["git-cliff", "cargo-dist"]},
         "plant": [[("user", "how do I cut a release?"),
                    ("agent*", "With cargo-release: `cargo release minor --execute` bumps Cargo.toml, commits, tags `vX.Y.Z` and pushes the tag; the release workflow builds the binaries. Run it from a clean main.")],
                   [("user", "the release notes were empty on the last tag"),
                    ("agent*", "The workflow takes the notes from CHANGELOG.md, which {tool} generates from conventional commits. Run `{tool}` (the Makefile's `changelog` target) and commit CHANGELOG.md before `cargo release`; I added a check that fails the release when the new version has no section.")]],
         "need": ["publish the next minor version",
                  "tag a new release with the fixes from this week",
                  "what's the full release procedure here?"],
         "near": ["what changed since the last release?"]},
        {"key": "rs-tokio-feature",
         "slots": {"feat": ["sync", "rt-multi-thread", "fs"], "item": ["OnceCell", "Runtime::new", "tokio::fs::read"]},
         "plant": [[("user", "cargo build: `error[E0432]: unresolved import` for {item} even though tokio is a dependency"),
                    ("agent*", "tokio puts it behind the `{feat}` feature, and Cargo.toml only enabled `macros`. I changed it to `tokio = {{ version = \"1\", features = [\"macros\", \"{feat}\"] }}`. The features are opt-in; check tokio's docs.rs feature flags when an item seems missing.")]],
         "need": ["build fails again with an unresolved tokio import after I added the watcher",
                  "the compiler can't find something from tokio that the docs say exists",
                  "why would a tokio item be missing at compile time?"],
         "near": ["how do I add a timeout to a tokio task?",
                  "should the main function use #[tokio::main] or build a runtime by hand?"]},
        {"key": "rs-musl-release",
         "slots": {"tgt": ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"]},
         "plant": [[("user", "the release binary fails on the alpine server: `not found` even though the file is there"),
                    ("agent*", "That is the glibc dynamic loader missing on Alpine. Build static: `rustup target add {tgt}` and `cargo build --release --target {tgt}`. I switched the release workflow to that target and `reqwest` to `rustls-tls` so no OpenSSL is needed.")]],
         "need": ["cut a release build for the alpine boxes",
                  "the binary won't start on the new container image, says not found",
                  "which target do we build releases for?"],
         "near": ["the release build takes 9 minutes, can we speed it up?",
                  "strip debug symbols from the release binary"]},
        {"key": "rs-snapshot-tests",
         "slots": {"cmd": ["cargo insta review", "cargo insta accept"]},
         "plant": [[("user", "a bunch of tests fail after I changed the table output"),
                    ("agent*", "They are insta snapshot tests (tests/snapshots/*.snap). When the output change is intended, run `cargo insta test` and then `{cmd}` to update the .snap files, and commit them with the change. Don't edit the .snap files by hand.")]],
         "need": ["I tweaked the column widths and now the cli tests fail, how do I update them?",
                  "the snapshot diffs are expected, accept them",
                  "tests/cli.rs is red after the formatting change"],
         "near": ["add a test that the --json output parses",
                  "the test for parse_line with unicode fails, can you look?"]},
        {"key": "rs-msrv",
         "slots": {"msrv": ["1.74", "1.70", "1.75"], "why": ["Debian bookworm packages", "the customer's RHEL 8 toolchain", "the Yocto build"]},
         "plant": [[("user", "can we use let-else and the newer std APIs?"),
                    ("agent*", "Only what Rust {msrv} has: we promised that MSRV because of {why}. `rust-version = \"{msrv}\"` is in Cargo.toml and CI has a job on {msrv}. `let-else` is fine (1.65); `LazyLock` (1.80) is not — keep `once_cell`.")]],
         "need": ["can I replace once_cell with std's LazyLock?",
                  "use the new is_none_or helper here",
                  "what's the oldest compiler we have to support?"],
         "near": ["update the rust toolchain in CI to the latest stable",
                  "what does `#[must_use]` do?"]},
        {"key": "rs-mmap-sigbus",
         "slots": {"file": ["the segment files", "the index file"]},
         "plant": [[("user", "it crashed with SIGBUS while reading"),
                    ("agent*", "We mmap {file}, and another process truncated one while we read it — touching mapped pages past the new end gives SIGBUS, not an error. We decided to keep mmap for speed but take an advisory lock (`fs2::FileExt::lock_shared`) while reading and `lock_exclusive` in `compact`, so truncation cannot happen mid-read.")]],
         "need": ["the tool died with a bus error when compaction was running",
                  "is it safe to run compact while a search is running?",
                  "write a new command that rewrites segments in place"],
         "near": ["add a checksum to the segment header",
                  "make the reader handle files larger than 4 GB"]},
        {"key": "rs-config-path",
         "slots": {"path": ["~/.config/logslice/config.toml", "$XDG_CONFIG_HOME/tracewalk/config.toml"], "env": ["LOGSLICE_CONFIG", "TRACEWALK_CONFIG"]},
         "plant": [[("user", "where does it read the config from?"),
                    ("agent*", "`read_config` looks at `${env}` first, then `{path}` (via the `directories` crate), then the built-in defaults. Unknown keys are an error (`#[serde(deny_unknown_fields)]`) so typos don't pass silently.")]],
         "need": ["my setting in the config file seems to be ignored",
                  "point the tool at a different config for the test run",
                  "it refuses to start, complaining about an unknown field in the settings"],
         "near": ["add a `color` option to the config",
                  "print the effective configuration with a --show-config flag"]},
        {"key": "rs-cross-linker",
         "slots": {"linker": ["aarch64-linux-gnu-gcc"]},
         "plant": [[("user", "cross compiling for the raspberry pi fails at the link step"),
                    ("agent*", "rustc was calling the host `cc`. Install `gcc-aarch64-linux-gnu` and add to .cargo/config.toml: `[target.aarch64-unknown-linux-gnu] linker = \"{linker}\"`. Then `cargo build --release --target aarch64-unknown-linux-gnu` works. Or use `cross`, which brings its own toolchain in Docker.")]],
         "need": ["build an arm64 binary for the pi again",
                  "linking fails with `file in wrong format` when targeting aarch64"],
         "near": ["the binary is too big for the pi's sd card, shrink it",
                  "run the tests under qemu"]},
        {"key": "rs-serde-rename",
         "slots": {"case": ["camelCase", "kebab-case"]},
         "plant": [[("user", "the json output has snake_case keys but the dashboard expects {case}"),
                    ("agent*", "Added `#[serde(rename_all = \"{case}\")]` on the output structs in src/output.rs. We agreed that the JSON output is a public format: any rename from now on needs a version bump and a CHANGELOG line.")]],
         "need": ["rename the `hits` field in the json output to `matches`",
                  "add a new field to the machine-readable output",
                  "the frontend can't read the keys we emit"],
         "near": ["pretty print the json output when --pretty is given",
                  "serialize the timestamps as RFC 3339"]},
    ],
}

STACKS["typescript"] = {
    "repos": ["dashboard-web", "admin-console", "checkout-ui", "partner-portal", "status-page"],
    "files": ["src/App.tsx", "src/pages/Orders.tsx", "src/components/Table.tsx", "src/api/client.ts",
              "src/hooks/useAuth.ts", "vite.config.ts", "src/store/cart.ts", "src/utils/format.ts"],
    "funcs": ["OrdersTable", "useAuth", "formatPrice", "fetchOrders", "CartDrawer", "DateRangePicker",
              "usePagination"],
    "filler": [
        [("user", "the {func} component re-renders too often"),
         ("agent", "Its `columns` prop was a new array every render. I wrapped it in `useMemo` in the parent and made {func} `React.memo`; the profiler shows 1 render per data change now.")],
        [("user", "add a loading skeleton to {func}"),
         ("agent", "While `isLoading` is true it renders 8 `<Skeleton height={{32}} />` rows; the real table replaces them once the query resolves.")],
        [("user", "convert {file} from class component to hooks"),
         ("agent", "Rewrote it as a function component: state with `useState`, the subscription in `useEffect` with cleanup. Behaviour is the same; its tests pass.")],
        [("user", "what's the difference between interface and type here"),
         ("agent", "For object shapes they are nearly interchangeable; `interface` can be reopened (declaration merging) and gives slightly nicer errors, `type` can express unions and mapped types. The codebase uses `type` for props, so I'd keep that.")],
        [("user", "fix the eslint warnings in {file}"),
         ("agent", "Fixed 5: two missing hook dependencies, an unused import, an `any` replaced by `Order[]`, and a `==` → `===`.")],
        [("user", "add aria labels to the icon buttons"),
         ("agent", "Added `aria-label` to the 7 icon-only buttons (edit, delete, close, …). axe no longer reports `button-name` violations on the orders page.")],
        [("user", "write a vitest test for {func}"),
         ("agent", "Added src/__tests__/{func}.test.tsx with 4 cases (empty, one page, many pages, error). `pnpm vitest run {func}` → 4 passed.")],
        [("user", "format prices with the user's locale"),
         ("agent", "`formatPrice` now uses `new Intl.NumberFormat(locale, {{ style: 'currency', currency }})`, with the locale from `navigator.language`.")],
        [("user", "the modal doesn't close on escape"),
         ("agent", "Added a `keydown` listener for `Escape` while the modal is open (removed on unmount) and focus goes back to the button that opened it.")],
        [("user", "make the table sortable by date"),
         ("agent", "Clicking the Date header toggles asc/desc; the sort state is in the URL (`?sort=date:desc`) so it survives reloads.")],
    ],
    "new_topics": [
        "add a dark mode toggle that remembers the choice",
        "build a CSV upload page for bulk price changes",
        "show a toast when an order is refunded",
        "add a chart of daily revenue on the dashboard",
        "make the sidebar collapsible on small screens",
        "add an empty state illustration to the orders list",
        "implement infinite scroll on the activity feed",
        "add keyboard shortcuts for the search box",
        "translate the settings page into German",
        "add a confirm dialog before deleting a product",
    ],
    "facts": [
        {"key": "ts-api-types",
         "slots": {"cmd": ["pnpm gen:api", "pnpm openapi"]},
         "plant": [[("user", "the Order type is out of sync with the backend again"),
                    ("agent*", "Don't hand-write API types: src/api/schema.d.ts is generated from the backend's OpenAPI spec with openapi-typescript. Run `{cmd}` (it fetches /openapi.json from the dev API) and commit the result.")]],
         "need": ["the backend added a field to orders, update the frontend types",
                  "typescript says property refundReason does not exist on the order",
                  "add a type for the new reports response"],
         "near": ["add a type guard for the websocket messages"]},
        {"key": "ts-node-version",
         "slots": {"ver": ["20.11.1", "22.3.0"]},
         "plant": [[("user", "vite build fails on my laptop with `crypto.getRandomValues is not a function`"),
                    ("agent*", "Your shell has Node 16. The repo needs Node {ver} (.nvmrc / `engines` in package.json); run `nvm use` in the repo. I added `engine-strict=true` to .npmrc so installs fail early on the wrong Node.")]],
         "need": ["the build crashes with a strange crypto error on the new machine",
                  "which node version should CI use?"],
         "near": ["upgrade vite to the next major"]},
        {"key": "ts-flags",
         "slots": {"svc": ["LaunchDarkly", "Unleash", "GrowthBook"]},
         "plant": [[("user", "how do feature flags work in this app?"),
                    ("agent*", "Flags come from {svc}: the client is created once in src/flags.ts and components read flags with `useFlag('flag-key')`. In tests, wrap with `<FlagsProvider overrides={{...}}>`.")],
                   [("user", "there are like 40 flags, half of them dead"),
                    ("agent*", "Agreed rule from now on: every new flag defaults to off, has an owner and a removal date in its description, and is deleted within two sprints of reaching 100%. I removed 17 flags that were at 100% for months.")]],
         "need": ["put the new checkout flow behind a flag",
                  "add a toggle so we can turn on the redesigned header gradually",
                  "QA needs the beta filters switched on in the e2e tests"],
         "near": ["the header looks broken in Safari"]},
        {"key": "ts-pnpm",
         "slots": {"ver": ["9.12.0", "9.4.0", "8.15.6"]},
         "plant": [[("user", "npm install gives me a different lockfile every time"),
                    ("agent*", "This repo uses pnpm (`packageManager: \"pnpm@{ver}\"` in package.json, pnpm-lock.yaml committed); package-lock.json shouldn't exist — I deleted it and added it to .gitignore. Run `corepack enable` once, then `pnpm install`, `pnpm add <pkg>`.")]],
         "need": ["add date-fns to the project",
                  "install the deps after I cloned it on the new laptop",
                  "there's a package-lock.json showing up in my git status again"],
         "near": ["update react-query to the latest version",
                  "why is node_modules 900 MB?"]},
        {"key": "ts-vite-proxy",
         "slots": {"port": ["8081", "8000", "3001"], "prefix": ["/api", "/v1"]},
         "plant": [[("user", "the fetch calls fail with CORS errors in dev"),
                    ("agent*", "In dev the UI runs on Vite's 5173 and the API on {port}. Instead of opening CORS on the API, vite.config.ts now proxies: `server.proxy = {{ '{prefix}': 'http://localhost:{port}' }}`, and the client uses relative URLs (`{prefix}/orders`).")]],
         "need": ["requests to the backend are blocked by the browser when I run it locally",
                  "which port is the backend on when developing?",
                  "add a call to the new /reports endpoint"],
         "near": ["the production build is blocked by CORS from the CDN domain",
                  "set up vite to open the browser automatically"]},
        {"key": "ts-auth-refresh",
         "slots": {"mins": ["15", "10", "5"]},
         "plant": [[("user", "users get logged out randomly"),
                    ("agent*", "The access token lives {mins} minutes and two requests were refreshing it at once; the second refresh used an already-rotated refresh token and the server revoked the session. src/api/client.ts now keeps one in-flight refresh promise that every 401 waits on (single-flight), and retries the original request once.")]],
         "need": ["someone reported being kicked to the login page in the middle of editing",
                  "how long do access tokens last?",
                  "add a retry for failed requests in the api client"],
         "near": ["add a 'remember me' checkbox to the login form",
                  "show the user's avatar in the header"]},
        {"key": "ts-date-utc",
         "slots": {"lib": ["date-fns-tz", "dayjs with the utc plugin"]},
         "plant": [[("user", "orders placed at 11pm show the next day's date for some users"),
                    ("agent*", "The API sends UTC ISO strings and we were slicing the date part. Now every date is rendered with {lib} in the user's zone; the rule we agreed: never `.slice(0, 10)` or `new Date(string)` on API dates, always the helpers in src/utils/format.ts.")]],
         "need": ["show the delivery date on the order detail page",
                  "a customer in Sydney sees the wrong day on their invoice list",
                  "add a created-at column to the refunds table"],
         "near": ["add a date range filter to the orders page",
                  "the datepicker is too wide on mobile"]},
        {"key": "ts-env-prefix",
         "slots": {"var": ["VITE_API_BASE", "VITE_SENTRY_DSN", "VITE_FEATURE_FLAGS_URL"]},
         "plant": [[("user", "import.meta.env.API_BASE is undefined in the build"),
                    ("agent*", "Vite only exposes variables starting with `VITE_` to client code. Renamed it to `{var}` in .env.production and the CI secrets, and typed it in src/vite-env.d.ts. Anything without the prefix is invisible in the browser (on purpose: secrets).")]],
         "need": ["my new environment variable is undefined in the frontend",
                  "add a setting for the analytics key that the UI can read",
                  "the sentry config comes out empty in production"],
         "near": ["load different config for staging and production builds",
                  "how do I read query parameters in the router?"]},
        {"key": "ts-playwright-auth",
         "slots": {"file": ["tests/.auth/admin.json", "e2e/.auth/user.json"]},
         "plant": [[("user", "the e2e tests are slow, each one logs in"),
                    ("agent*", "Now a setup project logs in once and saves the session with `page.context().storageState({{ path: '{file}' }})`; the other projects use `use: {{ storageState: '{file}' }}`. The file is git-ignored. Suite went from 6 to 2 minutes.")]],
         "need": ["add an e2e test for the refund flow",
                  "the end-to-end tests start failing at the login step",
                  "where do the browser tests get their logged in session?"],
         "near": ["take a screenshot on failure in the e2e tests",
                  "run the unit tests in watch mode"]},
        {"key": "ts-zustand-decision",
         "slots": {"old": ["Redux Toolkit", "MobX"]},
         "plant": [[("user", "should the cart state go in redux or context?"),
                    ("agent*", "We settled on zustand for client state and TanStack Query for server state; {old} is being phased out (only the legacy checkout still uses it). Reason: less boilerplate and no provider tree. New stores go in src/store/, one file per store.")]],
         "need": ["where should I keep the wishlist state?",
                  "add a global store for the notification preferences",
                  "create a slice for the filters panel"],
         "near": ["the cart total is wrong after removing an item",
                  "how do I cache the orders query for a minute?"]},
    ],
}

STACKS["go"] = {
    "repos": ["ingest-worker", "events-router", "metrics-gateway", "feed-fetcher", "audit-log"],
    "files": ["cmd/worker/main.go", "internal/consumer/consumer.go", "internal/store/pg.go",
              "internal/config/config.go", "internal/handler/http.go", "Makefile", "deploy/helm/values.yaml"],
    "funcs": ["HandleBatch", "NewConsumer", "Flush", "parseEnvelope", "Retry", "Shutdown", "loadConfig"],
    "filler": [
        [("user", "golangci-lint complains about an unchecked error in {file}"),
         ("agent", "The `defer rows.Close()` result was ignored and `resp.Body.Close()` too. Wrapped them; `golangci-lint run ./...` is clean.")],
        [("user", "add a context timeout to {func}"),
         ("agent", "`{func}` now takes `ctx` and does `ctx, cancel := context.WithTimeout(ctx, 5*time.Second); defer cancel()`. Callers pass the request context.")],
        [("user", "write a table-driven test for {func}"),
         ("agent", "Added {func}_test.go with 6 cases (valid, empty, bad JSON, missing type, huge payload, unicode). `go test ./internal/...` passes.")],
        [("user", "what's the difference between a nil slice and an empty slice here"),
         ("agent", "Both have length 0 and you can append to both; a nil slice marshals to JSON `null` and an empty one to `[]`. The API returns `[]`, so initialise with `make([]Event, 0)`.")],
        [("user", "rename the package util to something meaningful"),
         ("agent", "It only had retry helpers, so it is now `internal/backoff`; updated 9 imports. `go build ./...` and tests pass.")],
        [("user", "expose the queue depth as a prometheus metric"),
         ("agent", "Added a `ingest_queue_depth` gauge registered in internal/metrics, set after each poll. It shows up on /metrics.")],
        [("user", "add structured logging with slog"),
         ("agent", "Replaced `log.Printf` with `slog` (JSON handler in prod, text handler when `LOG_FORMAT=text`); every log line has `component` and `batch_id`.")],
        [("user", "why does this goroutine leak?"),
         ("agent", "It blocks forever sending on `results` after the caller returned on error. Made the channel buffered to the number of workers and added a `select` on `ctx.Done()`.")],
        [("user", "tidy up the go.mod"),
         ("agent", "`go mod tidy` dropped 3 unused modules and added the missing `golang.org/x/sync`. Builds and tests pass.")],
        [("user", "make the http handler return 400 on a bad body"),
         ("agent", "Decoding errors now return `400` with `{{\"error\": \"invalid body: ...\"}}` instead of 500. Added a test with a truncated JSON body.")],
    ],
    "new_topics": [
        "add a dead-letter topic for messages that fail three times",
        "implement graceful shutdown on SIGTERM",
        "write a small CLI to replay events from a file",
        "add an admin endpoint that pauses consumption",
        "batch the database inserts with COPY",
        "add OpenTelemetry traces around HandleBatch",
        "support a second message format (protobuf)",
        "add a readiness probe that checks the broker connection",
        "cache the schema lookups in memory for a minute",
        "write a benchmark for parseEnvelope",
    ],
    "facts": [
        {"key": "go-race",
         "slots": {"field": ["lastFlush", "inflight", "stats"]},
         "plant": [[("user", "tests pass locally but fail randomly in CI"),
                    ("agent*", "CI runs `go test -race`, and `{field}` on the consumer is written by the flusher goroutine and read by the metrics handler. It's an `atomic.Int64` now. Run `go test -race ./...` locally before pushing; plain `go test` hides these.")]],
         "need": ["a test is flaky on the pipeline but never fails for me",
                  "the data race detector complains about the consumer"],
         "near": ["speed up the test suite"]},
        {"key": "go-json-numbers",
         "slots": {"field": ["order_id", "event_id", "account_id"]},
         "plant": [[("user", "some ids come out wrong after we decode and re-encode them"),
                    ("agent*", "`{field}` is a 19-digit integer and decoding into `interface{{}}` turns it into float64, which loses precision. The envelope decoder now uses `dec.UseNumber()` and the struct field is `json.Number`/`int64`. Never decode events into `map[string]any` without UseNumber.")]],
         "need": ["the ids in the output don't match the input for large values",
                  "decode the new event type generically into a map"],
         "near": ["validate the event schema before processing"]},
        {"key": "go-deploy",
         "slots": {"ctx": ["stg-eu-1", "staging-gke"], "reg": ["ghcr.io", "registry.acme.internal"]},
         "plant": [[("user", "how is this deployed?"),
                    ("agent*", "Helm chart in deploy/helm; `make deploy ENV=staging` runs `helm upgrade --install` with values-staging.yaml against the kube context `{ctx}`. Check `kubectl config current-context` first, the prod context is on the same laptop.")],
                   [("user", "the pods are running an old build even though I deployed"),
                    ("agent*", "The chart used the `latest` tag with `imagePullPolicy: IfNotPresent`, so nodes kept their cached image. Images are now tagged with the git sha (`{reg}/…:$(git rev-parse --short HEAD)`) and the chart requires an explicit tag; never deploy `latest`.")]],
         "need": ["roll out my branch to staging",
                  "deploy the fix for the retry bug",
                  "staging still shows the old behaviour after my deploy"],
         "near": ["add a horizontal pod autoscaler"]},
        {"key": "go-kafka-group",
         "slots": {"group": ["ingest-worker-v2", "events-router-prod", "feed-fetcher-main"], "topic": ["orders.events", "clicks.raw", "feeds.updates"]},
         "plant": [[("user", "after the deploy the worker reprocessed a week of messages"),
                    ("agent*", "The consumer group id changed with the new config (it was derived from the hostname). A new group has no committed offsets, so with `auto.offset.reset=earliest` it read {topic} from the start. The group is now fixed to `{group}` in internal/config/config.go and must never change between deploys; if it must, move the offsets first with `kafka-consumer-groups --reset-offsets`.")]],
         "need": ["we're moving the worker to the new cluster namespace, anything to watch out for?",
                  "the staging deploy replayed old events again, why?",
                  "can I rename the consumer group to something tidier?"],
         "near": ["add a second topic to consume from",
                  "how many partitions should the new topic have?"]},
        {"key": "go-pg-pool",
         "slots": {"max": ["20", "25", "15"], "pgb": ["pgbouncer in transaction mode", "RDS Proxy"]},
         "plant": [[("user", "`prepared statement \"stmtcache_1\" already exists` errors in prod"),
                    ("agent*", "We go through {pgb}, which breaks pgx's per-connection statement cache. The pool config now sets `default_query_exec_mode=simple_protocol` (or `exec`) and `pool_max_conns={max}`; prepared statements across connections are off.")]],
         "need": ["postgres errors about a statement that already exists showed up again",
                  "add a new repository method that runs a prepared query",
                  "how big is the database connection pool?"],
         "near": ["write a migration for the events table",
                  "the query that lists audits is slow, add an index"]},
        {"key": "go-make-gen",
         "slots": {"tool": ["sqlc", "mockery", "buf"]},
         "plant": [[("user", "CI fails with `generated files are out of date`"),
                    ("agent*", "CI runs `make generate` and fails on any diff. After changing queries or interfaces, run `make generate` locally (it runs {tool} in Docker, pinned version) and commit the generated files. Don't run a locally installed {tool}: a different version produces a diff.")]],
         "need": ["I added a query, what else do I have to do before pushing?",
                  "the pipeline says the generated code differs",
                  "regenerate the code after my interface change"],
         "near": ["add a lint step to the CI pipeline",
                  "why does the docker build not use the cache?"]},
        {"key": "go-graceful",
         "slots": {"secs": ["25", "30", "45"]},
         "plant": [[("user", "pods get killed before they finish the batch"),
                    ("agent*", "Kubernetes sends SIGTERM then SIGKILL after `terminationGracePeriodSeconds` (30 by default). We now stop polling on SIGTERM, finish the batch and commit offsets within {secs}s, and set the grace period to 60 in deploy/helm/values.yaml. Flush must stay under that.")]],
         "need": ["the batches get cut off during rollouts",
                  "how long does shutdown have before the pod is killed?",
                  "add a final metrics flush when the worker stops"],
         "near": ["scale the worker to 6 replicas",
                  "add resource limits to the helm chart"]},
        {"key": "go-private-mod",
         "slots": {"host": ["git.acme.internal", "gitlab.northwind.io"]},
         "plant": [[("user", "go mod download fails: `410 Gone` for our internal lib"),
                    ("agent*", "The Go proxy and sumdb can't see private repos. Set `GOPRIVATE={host}/*` (I added it to the Makefile and the CI env) and git must use SSH for that host: `git config --global url.\"git@{host}:\".insteadOf \"https://{host}/\"`.")]],
         "need": ["adding our shared logging package fails to download",
                  "go get for the internal module says gone",
                  "set up the build on the new CI runner"],
         "near": ["upgrade to the latest Go release",
                  "vendor the dependencies"]},
    ],
}

STACKS["data"] = {
    "repos": ["forecast-etl", "churn-model", "sales-warehouse", "ab-analysis", "sensor-pipeline"],
    "files": ["pipelines/daily.py", "notebooks/explore.ipynb", "src/features.py", "src/train.py",
              "dags/ingest_dag.py", "sql/marts/revenue.sql", "config/params.yaml"],
    "funcs": ["build_features", "load_events", "train_model", "score_batch", "clean_sessions",
              "write_parquet", "detect_outliers"],
    "filler": [
        [("user", "vectorize the loop in {func}"),
         ("agent", "Replaced the `iterrows()` loop with a `groupby().transform('cumsum')` and a `np.where`; same output on the fixture, 40x faster on a month of data.")],
        [("user", "plot the weekly totals"),
         ("agent", "Added a matplotlib line chart of weekly totals with the 4-week rolling mean; saved as reports/weekly_totals.png.")],
        [("user", "add a test for {func} with missing values"),
         ("agent", "Added `test_{func}_handles_nans` — NaNs in `amount` are filled with 0 and counted in the `n_missing` column. Passing.")],
        [("user", "what does this SQL window function do"),
         ("agent", "`ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY event_ts DESC)` numbers each customer's events newest first; filtering `= 1` keeps the latest event per customer.")],
        [("user", "the notebook is a mess, move the cleaning code into src"),
         ("agent", "Moved the cleaning cells into `clean_sessions()` in src/features.py with a docstring; the notebook imports it now.")],
        [("user", "log how many rows each step drops"),
         ("agent", "Each step logs `step=..., rows_in=..., rows_out=...`; the dedup step drops about 2% on yesterday's data.")],
        [("user", "make the date parsing faster in {func}"),
         ("agent", "Passed `format='%Y-%m-%dT%H:%M:%S%z'` to `pd.to_datetime` (no inference); parsing 8M rows went from 41s to 3s.")],
        [("user", "rename the columns to snake case"),
         ("agent", "Added `df.columns = [to_snake(c) for c in df.columns]` right after loading; `OrderID` → `order_id` etc. Downstream references updated.")],
        [("user", "add type hints to {file}"),
         ("agent", "Annotated the public functions in {file} with `pd.DataFrame` / `pd.Series` types; mypy passes with the pandas-stubs package.")],
    ],
    "new_topics": [
        "add a feature for days since the customer's last order",
        "compute a 95% confidence interval for the conversion lift",
        "write the scores to the warehouse table instead of a CSV",
        "add a data quality check that fails when yesterday has no rows",
        "try a gradient boosting model instead of the logistic regression",
        "make a cohort retention table by signup month",
        "schedule the report to run every Monday at 7",
        "deduplicate the events by event_id and keep the latest",
        "explain the drop in the metric last Tuesday",
        "add a holdout month to the validation",
    ],
    "facts": [
        {"key": "dt-duckdb-memory",
         "slots": {"limit": ["6GB", "8GB"], "tmp": ["/scratch/duckdb_tmp", "/tmp/duck"]},
         "plant": [[("user", "the aggregation step gets OOM-killed"),
                    ("agent*", "DuckDB was using 80% of RAM by default and the container has 8 GB. We set `SET memory_limit='{limit}'` and `SET temp_directory='{tmp}'` so big joins spill to disk instead of dying. Both are in src/db.py's connect().")]],
         "need": ["the join over the full year runs out of memory",
                  "the container gets killed during the rollup step"],
         "near": ["write the rollup results to a parquet file"]},
        {"key": "dt-metric-def",
         "slots": {"days": ["28", "30"]},
         "plant": [[("user", "marketing's active users number is higher than ours"),
                    ("agent*", "Different definitions. We agreed with them on: active = at least one `session_start` in the trailing {days} days, excluding internal accounts (`is_internal = false`) and bots. It's documented in sql/marts/README.md and the mart now follows it.")]],
         "need": ["compute monthly active users for the board deck",
                  "why does our user count differ from the marketing dashboard?",
                  "add an active users column to the weekly report"],
         "near": ["count signups per week"]},
        {"key": "dt-backfill",
         "slots": {"queue": ["batch", "backfill"], "hours": ["6 and 9 am", "7 and 10 am"]},
         "plant": [[("user", "how do I reload a range of days?"),
                    ("agent*", "`python -m pipelines.daily --start 2026-01-01 --end 2026-01-31 --overwrite` rewrites those partitions; it's idempotent per day.")],
                   [("user", "finance complained their dashboards were slow this morning"),
                    ("agent*", "That was my backfill competing with their refresh. From now on backfills go on the `{queue}` warehouse queue (`--queue {queue}`) and never between {hours}, when the finance dashboards refresh.")]],
         "need": ["reprocess the last 30 days with the fixed currency conversion",
                  "rerun January, the source data was corrected",
                  "can I start a big reload right now?"],
         "near": ["the daily job failed last night"]},
        {"key": "dt-parquet-pyarrow",
         "slots": {"ver": ["14.0.2", "15.0.0"]},
         "plant": [[("user", "reading the parquet files from the lake fails: `ArrowInvalid: Unable to merge: Field amount has incompatible types: int64 vs double`"),
                    ("agent*", "Older partitions wrote `amount` as int64, newer as double. We now read with an explicit schema (`pa.schema([...('amount', pa.float64())...])`) via `pq.read_table(path, schema=SCHEMA)`; pyarrow is pinned to {ver} in requirements.txt. Any new column must be added to SCHEMA in src/io.py.")]],
         "need": ["loading last quarter's data errors about merging incompatible field types",
                  "add the discount column to what we read from the lake",
                  "the reader chokes on the old partitions again"],
         "near": ["write the output partitioned by day",
                  "compress the parquet output with zstd"]},
        {"key": "dt-airflow-catchup",
         "slots": {"dag": ["ingest_daily", "sales_rollup", "sensor_hourly"]},
         "plant": [[("user", "I deployed the DAG and it launched 200 runs"),
                    ("agent*", "`start_date` was in January and `catchup` defaults to True, so Airflow backfilled every interval. {dag} now has `catchup=False`; backfills are done on purpose with `airflow dags backfill -s ... -e ... {dag}`.")]],
         "need": ["add a new DAG for the weekly export",
                  "the scheduler started a flood of old runs after I changed the start date",
                  "rerun last week's loads for the daily pipeline"],
         "near": ["the DAG doesn't show up in the UI",
                  "send a slack message when a task fails"]},
        {"key": "dt-leakage",
         "slots": {"feat": ["days_to_cancel", "refund_count_30d", "last_ticket_status"]},
         "plant": [[("user", "the model's AUC jumped to 0.97, nice!"),
                    ("agent*", "Too good to be true: `{feat}` is computed from events after the prediction date — label leakage. I removed it and added a check in build_features that every feature uses only events with `event_ts < cutoff`. AUC is back to 0.81, which is honest.")]],
         "need": ["I added a few new features and the score is suspiciously high",
                  "add a feature from the support tickets table",
                  "is it ok to use the refund data in the model?"],
         "near": ["tune the learning rate of the model",
                  "save the trained model with a version number"]},
        {"key": "dt-warehouse-creds",
         "slots": {"wh": ["Snowflake", "BigQuery"], "role": ["ANALYST_RO", "etl_reader"], "ds": ["ANALYTICS.MARTS", "analytics_marts"]},
         "plant": [[("user", "how do I connect to the warehouse from the notebook?"),
                    ("agent*", "Use the read-only role `{role}` on {wh} (credentials from `~/.config/warehouse/profile.yml`, never in the notebook). Marts live in `{ds}`; raw tables are not readable with that role on purpose.")]],
         "need": ["query the revenue mart from python",
                  "I get permission denied on the raw events table",
                  "which role should the notebook use?"],
         "near": ["the revenue numbers don't match the finance report",
                  "make the SQL query faster"]},
        {"key": "dt-seed-split",
         "slots": {"seed": ["42", "1337", "2024"], "split": ["by customer_id", "by week"]},
         "plant": [[("user", "results change every time I rerun training"),
                    ("agent*", "Unseeded split and model. Everything now takes `seed={seed}` from config/params.yaml, and the split is {split} (GroupShuffleSplit) so one customer is never in both train and test.")]],
         "need": ["the validation score moves around between runs",
                  "split the data for the new model",
                  "why can't I reproduce yesterday's metric?"],
         "near": ["add early stopping to training",
                  "plot the feature importances"]},
    ],
}

STACKS["infra"] = {
    "repos": ["infra-live", "platform-terraform", "k8s-clusters", "cloud-foundation"],
    "files": ["envs/prod/main.tf", "modules/vpc/main.tf", "envs/staging/variables.tf",
              "modules/rds/main.tf", ".github/workflows/plan.yml", "envs/prod/backend.tf"],
    "funcs": ["vpc", "rds", "eks", "iam", "s3_logs", "alb"],
    "filler": [
        [("user", "run terraform fmt on the modules"),
         ("agent", "`terraform fmt -recursive modules/` reformatted 4 files (alignment only).")],
        [("user", "add tags to the {func} module resources"),
         ("agent", "Added `tags = merge(var.tags, {{ Module = \"{func}\" }})` to every taggable resource in modules/{func}; plan shows only tag changes.")],
        [("user", "what does this count trick do"),
         ("agent", "`count = var.enabled ? 1 : 0` creates the resource only when enabled; references then need `aws_x.this[0]`. `for_each` with a map is cleaner when there are several.")],
        [("user", "add a variable for the instance type"),
         ("agent", "Added `variable \"instance_type\"` (default `t3.medium`, validation that it starts with t3/m6i) and used it in the launch template.")],
        [("user", "document the outputs of the {func} module"),
         ("agent", "Each output has a `description`; README.md in modules/{func} has the inputs/outputs table generated by terraform-docs.")],
        [("user", "what will this plan change in staging?"),
         ("agent", "`terraform plan` for envs/staging: 2 to add (the {func} security group rules), 0 to change, 0 to destroy.")],
        [("user", "rename the {func} module's variable `name` to `name_prefix`"),
         ("agent", "Renamed it in modules/{func}/variables.tf and the 3 callers; the plan is empty, so nothing is recreated.")],
        [("user", "why does the plan show a diff on every run for the {func} resources?"),
         ("agent", "The JSON policy was built with a heredoc, so whitespace and key order differ from what AWS returns. Switched to `jsonencode()`; the perpetual diff is gone.")],
        [("user", "add a description to every variable in {file}"),
         ("agent", "Every variable in {file} now has a `description` and a `type`; `tflint` is clean.")],
        [("user", "tflint warns about a deprecated attribute"),
         ("agent", "`aws_s3_bucket` inline `versioning` is deprecated; moved it to a separate `aws_s3_bucket_versioning` resource with a `moved`-free plan (it's additive).")],
    ],
    "asks": ["add outputs for the {f} module's ids", "explain what the {f} module creates",
             "add a validation rule to the {f} module's variables"],
    "new_topics": [
        "add a bastion host in the staging VPC",
        "create an S3 bucket for the ML artifacts with lifecycle rules",
        "set up budget alerts at 80% of the monthly limit",
        "add a read replica to the staging database",
        "give the CI role permission to push to ECR",
        "add WAF rules in front of the public load balancer",
        "create a new IAM user for the auditors with read-only access",
        "set up VPC flow logs",
    ],
    "facts": [
        {"key": "tf-eks-version",
         "slots": {"ver": ["1.29", "1.30"]},
         "plant": [[("user", "the node group upgrade failed halfway"),
                    ("agent*", "Control plane and nodes have to be upgraded one minor at a time, control plane first. We're on {ver}; the procedure we wrote down: bump `cluster_version`, apply, then bump the node group's `version`, apply, then the addons (vpc-cni, coredns, kube-proxy).")]],
         "need": ["upgrade the cluster to the next kubernetes version",
                  "what order do we upgrade EKS components in?"],
         "near": ["add a spot node group for batch jobs"]},
        {"key": "tf-state-lock",
         "slots": {"table": ["tf-locks", "terraform-state-lock"], "bucket": ["acme-tf-state", "platform-tfstate-prod"]},
         "plant": [[("user", "terraform plan hangs at `Acquiring state lock`"),
                    ("agent*", "A CI run was cancelled mid-apply and left the lock in the DynamoDB table `{table}` (state is in s3://{bucket}). I checked no apply was running, then `terraform force-unlock <ID>` with the ID from the error. Never force-unlock while a pipeline is applying.")]],
         "need": ["plan is stuck waiting for the lock again",
                  "terraform says the state is locked by a run that no longer exists",
                  "where is the terraform state kept?"],
         "near": ["split the prod state into networking and apps",
                  "import the existing bucket into terraform"]},
        {"key": "tf-provider-pin",
         "slots": {"ver": ["5.31", "5.46", "4.67"]},
         "plant": [[("user", "the plan suddenly wants to replace the load balancer"),
                    ("agent*", "A new AWS provider minor changed a default. We pin the provider: `version = \"~> {ver}.0\"` in versions.tf and commit .terraform.lock.hcl; upgrades are their own PR with a plan reviewed on staging first.")]],
         "need": ["upgrade the aws provider",
                  "the plan shows changes nobody made",
                  "set up versions.tf in the new module"],
         "near": ["add a new listener rule on the load balancer",
                  "upgrade terraform itself to the newest version"]},
        {"key": "tf-prod-apply",
         "slots": {"who": ["the #infra-changes channel", "the on-call lead"]},
         "plant": [[("user", "can you apply this to prod?"),
                    ("agent*", "Per our process I won't apply prod from a laptop: prod applies only run in the `apply-prod` GitHub workflow after the plan is approved in the PR and announced in {who}. I opened the PR with the plan output.")]],
         "need": ["just run terraform apply on production for me, it's a tiny change",
                  "push the bucket policy change live",
                  "what's the procedure to change prod infra?"],
         "near": ["apply the change in staging",
                  "show me the plan for the staging env"]},
    ],
}

# ---------------------------------------------------------------------------------------
# Facts about the developer, the machine and how they like to work: planted in one
# project, needed anywhere.
# ---------------------------------------------------------------------------------------
PERSONAL = [
    {"key": "pref-no-push",
     "plant": [[("user*", "please never push to the remote yourself, I always review and push manually"),
                ("agent", "Understood: I'll commit locally when asked but never run `git push`.")]],
     "need": ["commit and push this fix", "ship it to origin", "push the branch so I can open the PR"],
     "near": ["show me what the last commit changed"]},
    {"key": "pref-conventional",
     "slots": {"scope": ["scope in parentheses", "a ticket id in the footer"]},
     "plant": [[("user*", "commit messages: conventional commits please (feat:, fix:, chore:) with a {scope}, imperative mood, no period"),
                ("agent", "Got it, e.g. `fix(api): handle empty cart`.")]],
     "need": ["write the commit message for these changes", "commit the refactor with a proper message",
              "squash these and give it a good message"],
     "near": ["show me the last five commits"],
     "blocks": ["commit this"]},
    {"key": "pref-tests-first",
     "plant": [[("user*", "for bug fixes, first write a failing test that reproduces it, then fix"),
                ("agent", "OK: a failing test first, then the fix, and I'll show both.")]],
     "need": ["fix the off-by-one in the pagination", "the parser crashes on an empty line, fix it"],
     "near": ["write tests for the new module"],
     "blocks": ["fix "]},
    {"key": "pref-british",
     "plant": [[("user*", "use British spelling in user-facing text and docs (colour, organisation)"),
                ("agent", "Will do.")]],
     "need": ["write the README section about configuration", "add an error message for invalid colours in the theme"],
     "near": [],
     "blocks": ["README", "incident summary", "CONTRIBUTING", "translate", "toast", "empty state", "error message"]},
    {"key": "mach-colima",
     "slots": {"cpu": ["M2", "M3 Pro", "M1"]},
     "plant": [[("user", "docker compose up fails with `Cannot connect to the Docker daemon at unix:///var/run/docker.sock`"),
                ("agent", "Is Docker Desktop running?"),
                ("user*", "no docker desktop on this machine, it's an {cpu} mac and I use colima"),
                ("agent*", "Then start it with `colima start --cpu 4 --memory 8` and point the tools at its socket: `export DOCKER_HOST=unix://$HOME/.colima/default/docker.sock`. Images for amd64 only need `--platform linux/amd64` (slow, emulated).")]],
     "need": ["containers won't start, it says it can't reach the daemon",
              "the test database container doesn't come up on my laptop",
              "build the image for the server, which is x86"],
     "near": ["write a Dockerfile for the service"]},
    {"key": "mach-pyenv",
     "slots": {"ver": ["3.12.4", "3.11.9"]},
     "plant": [[("user*", "python on this machine is managed by pyenv, use {ver} — the system python is 3.9 and breaks things"),
                ("agent", "OK, I'll use `pyenv local {ver}` / `~/.pyenv/versions/{ver}/bin/python`.")]],
     "need": ["make a virtualenv for the scripts folder", "the script fails with a syntax error on a match statement"],
     "near": []},
    {"key": "mach-gpu-box",
     "slots": {"host": ["gpu-01", "tesla-box", "lab-a100"], "user": ["ml", "research"]},
     "plant": [[("user", "training is way too slow on my laptop"),
                ("agent", "Is there a machine with a GPU you can use?"),
                ("user*", "yes, `ssh {user}@{host}`, it has an A100; data goes under /scratch, home is tiny"),
                ("agent", "Then run it there: rsync the repo to /scratch/$USER and start training in tmux.")]],
     "need": ["kick off the full training run on the GPU machine", "where should I put the dataset on the training server?"],
     "near": ["how much memory does the model need?"]},
    {"key": "mach-vpn",
     "slots": {"vpn": ["Tailscale (`sudo tailscale up`)", "the WireGuard tunnel (`wg-quick up staging`)"], "net": ["10.20.0.0/16", "100.64.0.0/10"]},
     "plant": [[("user", "can't reach the staging database from my machine, connection times out"),
                ("agent*", "Staging hosts are only on the private network ({net}); bring up {vpn} first, then it connects. The timeout (not a refusal) is the tell.")]],
     "need": ["connecting to the staging db just hangs", "the internal dashboard doesn't load from home"],
     "near": ["the production database is slow"]},
    {"key": "mach-linux-box",
     "slots": {"distro": ["Fedora 40", "Arch", "Ubuntu 24.04"]},
     "plant": [[("user*", "fyi my work machine is {distro} with podman instead of docker, `docker` is an alias to podman"),
                ("agent", "Good to know: compose files go through `podman-compose`, and rootless ports under 1024 won't bind.")]],
     "need": ["the compose file fails to bind port 80 locally", "why does the container build behave differently on my machine?"],
     "near": []},
    {"key": "pref-timezone",
     "slots": {"tz": ["CET", "US Pacific", "IST"]},
     "plant": [[("user*", "when you give me times, use {tz}, that's where I am"),
                ("agent", "Will do.")]],
     "need": ["when did the last deploy happen?", "what time does the nightly job run, in my time?"],
     "near": []},
    {"key": "pref-pr-size",
     "plant": [[("user*", "keep PRs small: one concern per PR, under ~300 changed lines; split refactors from behaviour changes"),
                ("agent", "Understood, I'll propose a split when a change grows.")]],
     "need": ["open a PR with all of today's changes", "this refactor and the bug fix, can they go in one PR?"],
     "near": []},
    {"key": "pref-editor",
     "plant": [[("user*", "I use neovim, don't add VS Code settings or .vscode folders to repos"),
                ("agent", "Noted, nothing editor-specific.")]],
     "need": ["set up editor config so everyone gets format on save", "add recommended extensions for the project"],
     "near": []},
    {"key": "pref-fish-shell",
     "plant": [[("user*", "when you show shell commands, give me fish shell syntax, not bash — `set -x VAR value`, no `export`"),
                ("agent", "Will do.")]],
     "need": ["how do I set the API key in my terminal for this session?", "give me the command to point the tool at the staging config"],
     "near": []},
]

# Requests that need nothing from before.
TRIVIAL = [
    "run the tests", "commit this", "ok go ahead", "looks good, thanks", "show me the diff",
    "format the code", "undo that last change", "what files did you change?", "continue",
    "yes do it", "open the file again", "run the linter", "try again", "stop, that's enough",
    "good, now the next one", "git status", "rerun the failing test only", "push is not needed, thanks",
    "make it shorter", "ok, revert it", "check the build", "what's the current branch?",
    "next", "can you paste the error again", "clean up the debug prints you added",
]

GENERIC_NEW = [
    "write a README section on how to run the project locally",
    "add a CONTRIBUTING file with the branch naming rules",
    "set up a GitHub Action that runs the tests on pull requests",
    "add a .editorconfig with 4-space indents",
    "what's a good way to structure feature flags?",
    "explain the difference between a mutex and a semaphore",
    "write a bash one-liner to find the largest files in the repo",
    "how do I squash the last three commits?",
    "draft a short incident summary for yesterday's outage",
    "add a LICENSE file, MIT",
    "how do I cherry-pick a commit from another branch?",
    "write a regex that matches semantic version strings",
]

GENERIC_FILLER = [
    [("user", "thanks, that worked"), ("agent", "Great. Anything else on this?")],
    [("user", "show me the diff"), ("agent", "3 files changed, 41 insertions(+), 12 deletions(-): {file} and two tests.")],
    [("user", "run the tests"), ("agent", "All green: 0 failed.")],
    [("user", "commit this"), ("agent", "Committed as `{sha}` on branch `{branch}`.")],
    [("user", "what branch am I on?"), ("agent", "`{branch}`, 2 commits ahead of main.")],
    [("user", "ok, undo that last change"), ("agent", "Reverted the edit to {file}; the working tree matches the last commit for that file.")],
    [("user", "continue"), ("agent", "Done with the remaining two call sites; everything compiles.")],
    [("user", "can you open {file}"), ("agent", "Here it is (142 lines). The part you asked about is around line 60, in `{func}`.")],
    [("user", "create a branch for this"), ("agent", "Created and switched to `{branch}`.")],
    [("user", "what's left on the TODO list?"), ("agent", "Two items: the error message wording and a test for the empty case.")],
]

BRANCHES = ["fix/rounding", "feat/export", "chore/deps", "feat/pagination", "fix/flaky-test",
            "refactor/config", "feat/webhooks", "fix/timeout"]


# ---------------------------------------------------------------------------------------
# Tool steps. Agent turns carry what the agent ran (a test run, a grep, a file read, an
# edit, a build) the way capture stores it, so a record's length says nothing about whether
# it holds a fact: filler and evidence draw their length from one distribution.
# ---------------------------------------------------------------------------------------

TEST_CMD = {
    "python": "uv run pytest -q {test}", "data": "uv run pytest -q tests/",
    "rust": "cargo test {func}", "typescript": "npx vitest run {file}",
    "go": "go test ./internal/... -run {func}", "infra": "terraform plan -no-color",
}
BUILD_CMD = {
    "python": "uv run ruff check . && uv run mypy app", "data": "uv run ruff check src pipelines",
    "rust": "cargo build --all-targets", "typescript": "npm run build",
    "go": "go vet ./... && go build ./...", "infra": "terraform validate && tflint",
}
CASES = ["empty", "zero", "unicode", "large_input", "missing_field", "duplicate", "negative",
         "timeout", "retry", "happy_path", "invalid", "boundary", "concurrent", "nested"]
CODE = {
    "python": ["def {func}(session: AsyncSession, customer_id: int) -> Invoice:",
               "    stmt = select(Invoice).where(Invoice.customer_id == customer_id)",
               "    result = await session.execute(stmt)", "    return result.scalars().first()",
               "from app.db import get_session", "    if amount <= 0:",
               "        raise HTTPException(status_code=422, detail=\"amount must be positive\")",
               "    logger.info(\"{func} done\", extra={{\"rid\": request_id.get()}})",
               "@router.post(\"/invoices\", status_code=201)", "    total = sum(line.price for line in lines)",
               "class InvoiceOut(BaseModel):", "    model_config = ConfigDict(from_attributes=True)"],
    "data": ["def {func}(df: pd.DataFrame) -> pd.DataFrame:", "    df = df.dropna(subset=[\"customer_id\"])",
             "    return df.groupby(\"customer_id\").agg(total=(\"amount\", \"sum\"))",
             "with DAG(\"daily_events\", schedule=\"0 3 * * *\", catchup=False) as dag:",
             "    events = load_events(ds)", "    features = {func}(events)",
             "    X_train, X_test = train_test_split(X, test_size=0.2)",
             "    model.fit(X_train, y_train)", "import pandas as pd", "    df[\"day\"] = df[\"ts\"].dt.date"],
    "rust": ["pub fn {func}(path: &Path) -> Result<Config> {{", "    let text = fs::read_to_string(path)?;",
             "    let cfg: Config = toml::from_str(&text).context(\"parsing config\")?;", "    Ok(cfg)", "}}",
             "#[derive(Debug, Parser)]", "struct ListArgs {{", "    #[arg(long)]", "    json: bool,",
             "    for entry in walkdir::WalkDir::new(root) {{", "        let entry = entry?;",
             "impl Segment {{", "    fn len(&self) -> usize {{ self.entries.len() }}", "use anyhow::{{Context, Result}};"],
    "typescript": ["export function {func}(props: Props) {{", "  const {{ data, isLoading }} = useQuery(ordersQuery);",
                   "  if (isLoading) return <Spinner />;", "  return <Table rows={{data.items}} />;", "}}",
                   "import {{ useQuery }} from \"@tanstack/react-query\";", "const formatter = new Intl.NumberFormat(\"en-GB\");",
                   "  useEffect(() => {{", "  }}, [orderId]);", "export default {func};",
                   "type Props = {{ orderId: string; onClose: () => void }};"],
    "go": ["func {func}(ctx context.Context, msgs []kafka.Message) error {{", "\tfor _, m := range msgs {{",
           "\t\tif err := s.store.Insert(ctx, m.Value); err != nil {{", "\t\t\treturn fmt.Errorf(\"insert: %w\", err)",
           "\t\t}}", "\t}}", "\treturn nil", "}}", "type Consumer struct {{", "\treader *kafka.Reader",
           "\tlog    *slog.Logger", "import \"github.com/segmentio/kafka-go\""],
    "infra": ["resource \"aws_security_group\" \"this\" {{", "  name_prefix = var.name_prefix",
              "  vpc_id      = var.vpc_id", "  tags        = merge(var.tags, {{ Module = \"{func}\" }})", "}}",
              "module \"{func}\" {{", "  source = \"../../modules/{func}\"", "variable \"instance_type\" {{",
              "  type    = string", "  default = \"t3.medium\"", "output \"id\" {{", "  value = aws_instance.this.id"],
}
FOLLOW_UPS = [
    "I also checked the other call sites; nothing else needed changing.",
    "The full test suite still passes.",
    "I left the public interface as it was, so callers are unaffected.",
    "Nothing else in the diff changed behaviour.",
    "I kept the change small so it is easy to review.",
    "Let me know if you want the same treatment elsewhere.",
    "There is one warning left in an unrelated file; I did not touch it.",
    "The linter and the type checker are both clean.",
    "I ran it twice to be sure the result is stable.",
    "The commit is not made yet; say if you want one.",
    "If this comes up again, the log line now says which input caused it.",
    "I added a short comment above the change explaining why.",
]
OPENERS = ["", "", "", "Found it. ", "OK — ", "Right: ", "Looked into it. ", "Short version: "]


def tool_json(obj):
    """A tool input the way capture renders it into a record's text (compact JSON)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def captured_framework(name):
    """The session format a sample's framework is written in when the loader captures it:
    Claude Code's JSONL for claude-code and cursor, Codex's rollout files for the others."""
    return "claude-code" if name in ("claude-code", "cursor") else "codex"


def tool_text(framework, tool):
    """One tool step as it appears in a captured record's text."""
    if captured_framework(framework) == "codex" and tool["name"] == "Bash":
        name, inp = "shell", {"command": ["bash", "-lc", tool["input"]]}
    else:
        name, inp = tool["name"], TOOL_INPUT[tool["name"]](tool["input"])
    return f"\n\n[tool {name}] {tool_json(inp)}" + (f"\n{tool['output']}" if tool["output"] else "")


def _edit_input(s):
    path, _, rest = s.partition("\n")
    old, _, new = rest.partition("\n=>\n")
    return {"file_path": path, "old_string": old, "new_string": new}


TOOL_INPUT = {
    "Bash": lambda s: {"command": s},
    "Read": lambda s: {"file_path": s},
    "Grep": lambda s: {"pattern": s.split(" in ")[0], "path": s.split(" in ")[-1]},
    "Edit": _edit_input,
}


def record_text(framework, user, answers):
    """A record's text as the loader builds it through capture: the request, then each agent
    turn's tool steps and its answer."""
    text = user
    for a in answers:
        for t in a.get("tools", []):
            text += tool_text(framework, t)
        if a["text"].strip():
            text += "\n\n" + a["text"].strip()
    return text


def target_length(r):
    """A record's length, the same draw for filler and evidence: a few short exchanges,
    most carrying tool output (log-uniform up to a few thousand characters)."""
    if r.random() < 0.16:
        return r.randint(70, 240)
    return int(240 * (16 ** r.random()))


def code_line(r, stack, slots):
    return r.pick(CODE[stack]).format(**slots)


def make_tool(r, kind, stack, slots, lines):
    """One tool step of `kind` with about `lines` lines of output."""
    st = STACKS[stack]
    f = slots["file"]
    func = slots["func"]
    lines = max(1, lines)
    if kind == "test":
        test = f if f.startswith("tests/") else "tests/test_" + f.rsplit("/", 1)[-1].split(".")[0] + ".py"
        cmd = TEST_CMD[stack].format(test=test, func=func, file=f)
        out = []
        n = 0
        for _ in range(lines - 1):
            case = r.pick(CASES)
            n += 1
            if stack in ("python", "data"):
                out.append(f"{test}::test_{func}_{case} PASSED{' ' * 8}[{min(99, 3 * n):3d}%]")
            elif stack == "rust":
                out.append(f"test {f.split('/')[-1].split('.')[0]}::tests::{func}_{case} ... ok")
            elif stack == "typescript":
                out.append(f" ✓ {f} > {func} > {case.replace('_', ' ')} {r.randint(1, 40)}ms")
            elif stack == "go":
                out.append(f"=== RUN   Test{func}/{case}\n--- PASS: Test{func}/{case} (0.0{r.randint(0, 9)}s)")
            else:
                m = r.pick(st["funcs"])
                out.append(f"  # module.{m}.aws_security_group_rule.{case} will be updated in-place")
        fail = r.randint(0, 2) if r.random() < 0.2 else 0
        if stack in ("python", "data"):
            out.append(f"==== {n - fail} passed{f', {fail} failed' if fail else ''} in {r.randint(1, 40)}.{r.randint(0, 99):02d}s ====")
        elif stack == "rust":
            out.append(f"test result: {'FAILED' if fail else 'ok'}. {n - fail} passed; {fail} failed; 0 ignored")
        elif stack == "typescript":
            out.append(f" Test Files  1 passed (1)\n      Tests  {n - fail} passed | {fail} failed ({n})")
        elif stack == "go":
            out.append(f"{'FAIL' if fail else 'ok'}  \tgithub.com/example/{func.lower()}\t0.{r.randint(10, 99)}s")
        else:
            out.append(f"Plan: {r.randint(0, 3)} to add, {n} to change, 0 to destroy.")
        return {"name": "Bash", "input": cmd, "output": "\n".join(out)}
    if kind == "grep":
        pattern = r.pick([func, func.lower(), r.pick(st["funcs"])])
        where = f.split("/")[0] if "/" in f else "."
        out = [f"{r.pick(st['files'])}:{r.randint(3, 400)}:{code_line(r, stack, slots).strip()}"
               for _ in range(lines)]
        return {"name": "Grep", "input": f"{pattern} in {where}", "output": "\n".join(out)}
    if kind == "read":
        start = r.randint(1, 200)
        out = [f"{start + i:6d}\t{code_line(r, stack, slots)}" for i in range(lines)]
        return {"name": "Read", "input": f, "output": "\n".join(out)}
    if kind == "edit":
        old = code_line(r, stack, slots)
        new = code_line(r, stack, slots)
        out = [f"The file {f} has been updated. Here's the result of running `cat -n` on a snippet:"]
        start = r.randint(1, 200)
        out += [f"{start + i:6d}\t{code_line(r, stack, slots)}" for i in range(lines - 1)]
        return {"name": "Edit", "input": f"{f}\n{old}\n=>\n{new}", "output": "\n".join(out)}
    # build
    cmd = BUILD_CMD[stack]
    out = []
    for _ in range(lines - 1):
        if stack == "rust":
            out.append(f"   Compiling {r.pick(['serde', 'tokio', 'clap', 'anyhow', 'regex', 'walkdir', 'toml'])} v1.{r.randint(0, 40)}.{r.randint(0, 9)}")
        elif stack == "typescript":
            out.append(f"dist/assets/{r.pick(['index', 'vendor', 'orders', 'chart'])}-{r.randrange(16 ** 8):08x}.js  {r.randint(2, 300)}.{r.randint(0, 9)} kB │ gzip: {r.randint(1, 90)}.{r.randint(0, 9)} kB")
        elif stack == "infra":
            out.append(f"{r.pick(st['files'])}:{r.randint(1, 120)}: Notice: variable has no description")
        else:
            out.append(f"{r.pick(st['files'])}:{r.randint(1, 300)}:{r.randint(1, 80)}: checked")
    out.append(r.pick(["All checks passed!", "Finished.", "Success! The configuration is valid.",
                       "build ok", "Found 0 errors."]))
    return {"name": "Bash", "input": cmd, "output": "\n".join(out)}


TOOL_KINDS = ["test", "grep", "read", "edit", "build"]


def fill_tools(r, stack, slots, budget, framework):
    """Tool steps whose rendered text is about `budget` characters (at most four steps)."""
    tools = []
    left = budget
    while left > 60 and len(tools) < 4:
        kind = r.pick(TOOL_KINDS)
        share = left if len(tools) == 3 or r.random() < 0.5 else int(left * r.uniform(0.3, 0.7))
        t = make_tool(r, kind, stack, slots, 1)
        one = len(tool_text(framework, t))
        per_line = max(20, (len(tool_text(framework, make_tool(r, kind, stack, slots, 4))) - one) / 3)
        n = 1 + max(0, int((share - one) / per_line))
        t = make_tool(r, kind, stack, slots, n)
        # Trim lines until it fits the budget left (a step always keeps one line).
        out = t["output"].split("\n")
        while len(out) > 1 and len(tool_text(framework, t)) > left + 40:
            out.pop(-2 if len(out) > 2 else -1)
            t["output"] = "\n".join(out)
        tools.append(t)
        left -= len(tool_text(framework, t))
    return tools


# Wordings around a request: the same need asked on different days in different moods.
FRAMINGS = [
    "{q}", "{q}", "{q}", "{q}", "{q} please", "{q}, please", "can you {ql}", "could you {ql}?",
    "hey, {ql}", "quick one: {ql}", "{q} — thanks", "ok so {ql}", "{q}?", "right, {ql}",
    "one more thing: {ql}", "{q} (no rush)", "before I forget, {ql}", "{q}, when you get a chance",
    "so, {ql}", "I need help: {ql}", "{q}. it's blocking me", "new task: {ql}", "{q} — any idea?",
    "morning! {ql}", "{q}; I'm on {branch}", "back on {repo}: {ql}", "in {repo}, {ql}",
    "{q} (I'm on {branch})", "pls {ql}", "{q}. same as usual", "hmm, {ql}", "{q}!",
    "another thing — {ql}", "{q}, thx", "need this today: {ql}", "help me out, {ql}",
]
PLANT_FRAMINGS = [
    "{q}", "{q}", "{q}", "hey, {ql}", "{q} — any idea why?", "ugh, {ql}", "quick question: {ql}",
    "{q}. can you look?", "so {ql}", "{q}, help", "in {repo}: {ql}", "{q} (on {branch})",
]


def frame(r, text, bank, slots):
    """`text` in one of the wordings of `bank`; returns the text and the wording's index."""
    i = r.randrange(len(bank))
    ql = text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
    return bank[i].format(q=text, ql=ql, branch=slots.get("branch", "main"),
                          repo=slots.get("repo", "the repo")), i


def short_answer(text, template):
    """A fact's answer cut to its one sentence carrying the most of the fact's values (the
    template's slots), for the records that are short."""
    parts = [p for p in _sentences(template)]
    filled = _sentences(text)
    if len(parts) != len(filled) or len(filled) < 2:
        return text
    best = max(range(len(parts)), key=lambda i: (parts[i].count("{"), -i))
    return filled[best].rstrip(";").rstrip() + ("." if filled[best].endswith(";") else "")


def _sentences(text):
    out, cur = [], ""
    for i, ch in enumerate(text):
        cur += ch
        if ch in ".;" and (i + 1 == len(text) or text[i + 1] == " ") and not cur.rstrip().endswith(("e.g.", "i.e.")):
            out.append(cur.strip())
            cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


class Rng(random.Random):
    """random.Random with a couple of helpers."""

    def pick(self, xs):
        return xs[self.randrange(len(xs))]


def fill(text, slots):
    return text.format(**slots)


def date_text(t):
    """`9:05 am on 3 June, 2026` (LoCoMo's format, no leading zeros)."""
    hour = t.hour % 12 or 12
    return f"{hour}:{t.minute:02d} {'am' if t.hour < 12 else 'pm'} on {t.day} {t.strftime('%B')}, {t.year}"


class Builder:
    """One developer's history and the requests asked after it."""

    def __init__(self, rng, index):
        self.rng = rng
        self.index = index
        r = rng
        self.user = USERS[index % len(USERS)]
        org = ORGS[index % len(ORGS)]
        stacks = list(STACKS)
        r.shuffle(stacks)
        n_projects = r.choice([2, 3, 3, 4])
        self.projects = []
        for s in stacks[:n_projects]:
            repo = r.pick(STACKS[s]["repos"])
            owner = org if r.random() < 0.7 else self.user
            self.projects.append({"stack": s, "url": f"github.com/{owner}/{repo}"})
        fws = FRAMEWORKS[:]
        r.shuffle(fws)
        self.frameworks = fws[: r.choice([2, 3, 3, 4])]
        self.sessions = []  # list of dicts: project, framework, time, turns
        self.qa = []
        self.asked = set()
        self.phrasings = set()

    def framework(self):
        # The first framework is the developer's main one.
        r = self.rng
        return self.frameworks[0] if r.random() < 0.55 else r.pick(self.frameworks)

    def build(self):
        r = self.rng
        n_sessions = r.randint(12, 25)
        start = dt.datetime(2026, r.randint(1, 4), r.randint(1, 28), r.randint(8, 11), r.randint(0, 59))
        t = start
        plan = []
        for i in range(n_sessions):
            # Work on one project for a stretch, sometimes switching.
            if i == 0 or r.random() < 0.35:
                proj = r.pick(self.projects)
            # Every project gets at least a few sessions.
            if i < len(self.projects):
                proj = self.projects[i]
            plan.append(proj)
            t = t + dt.timedelta(days=r.choice([0, 1, 1, 2, 2, 3, 4, 6, 9]), hours=r.randint(1, 9), minutes=r.randint(0, 59))
            if t.hour < 7:
                t = t.replace(hour=t.hour + 8)
            self.sessions.append({"project": proj, "framework": self.framework(), "time": t, "exchanges": []})
        # Facts: each project's stack facts (a subset), and personal facts.
        planted = []
        for p in self.projects:
            facts = STACKS[p["stack"]]["facts"][:]
            r.shuffle(facts)
            # A project worked on in few sessions holds few facts, so facts are spread over
            # time like the work itself.
            sessions = sum(1 for s in self.sessions if s["project"] is p)
            k = min(len(facts), r.randint(4, 8), 3 * sessions)
            for f in facts[:k]:
                planted.append((f, p))
        personal = PERSONAL[:]
        r.shuffle(personal)
        self.blocked = []
        for f in personal[: r.randint(4, 6)]:
            planted.append((f, None))
            self.blocked += f.get("blocks", [])
        # Place each fact's exchanges in any session of its project (or any session, for
        # personal facts): requests are asked after the last one, and evidence is as old as
        # the filler around it.
        placements = []
        for f, p in planted:
            slots = {k: r.pick(v) for k, v in f.get("slots", {}).items()}
            cands = [i for i, s in enumerate(self.sessions) if p is None or s["project"] is p]
            si = r.pick(cands)
            ex = [[(sp, fill(tx, slots)) for sp, tx in exch] for exch in f["plant"]]
            at = si
            for exch, tpl in zip(ex, f["plant"]):
                # A fact told in parts: each later part usually in a later session (days on).
                self.sessions[at]["exchanges"].append(
                    {"turns": exch, "fact": f["key"], "templates": [tx for _, tx in tpl]})
                later = [i for i in cands if i > at]
                if later and r.random() < 0.8:
                    at = r.pick(later[:4])
            placements.append((f, p, slots, si))
        # Fill every session up to its size with filler, in random order.
        for s in self.sessions:
            stack = s["project"]["stack"]
            want = r.randint(3, 10)
            used = set()
            while sum(len(e["turns"]) for e in s["exchanges"]) < 2 * want:
                bank = STACKS[stack]["filler"] if r.random() < 0.75 else GENERIC_FILLER
                pick = r.randrange(len(bank))
                if (id(bank), pick) in used:
                    continue
                used.add((id(bank), pick))
                s["exchanges"].append({"turns": self.filler(bank[pick], stack), "fact": None,
                                       "templates": [tx for _, tx in bank[pick]]})
            r.shuffle(s["exchanges"])
            # Cap at 20 turns, keeping planted exchanges.
            while sum(len(e["turns"]) for e in s["exchanges"]) > 20:
                drop = [i for i, e in enumerate(s["exchanges"]) if e["fact"] is None]
                if not drop:
                    break
                s["exchanges"].pop(r.pick(drop))
        # Give turns their dialog ids; remember where each fact's evidence ended up.
        evidence = {}
        for n, s in enumerate(self.sessions, start=1):
            s["turns"] = []
            for e in s["exchanges"]:
                for sp, turn in zip((sp for sp, _ in e["turns"]), self.shape(e, s)):
                    dia = f"D{n}:{len(s['turns']) + 1}"
                    s["turns"].append({"speaker": sp.rstrip("*"), "dia_id": dia, **turn})
                    if sp.endswith("*") and e["fact"]:
                        evidence.setdefault(e["fact"], []).append(dia)
        last = self.sessions[-1]["time"]
        ask_time = dt.datetime(last.year, last.month, last.day, 8) + dt.timedelta(days=r.randint(1, 5))
        # Requests that need a planted fact (category 4), and their near misses (6).
        for f, p, slots, si in placements:
            needs = f["need"][:]
            r.shuffle(needs)
            k = r.choice([1, 2, 2, 3]) if p is not None else r.choice([1, 2])
            for q in needs[:k]:
                if p is None:
                    # A personal fact: asked in any project, usually not where it was said.
                    others = [x for x in self.projects if x is not self.sessions[si]["project"]]
                    proj = r.pick(others) if others and r.random() < 0.75 else self.sessions[si]["project"]
                else:
                    proj = p
                self.ask(fill(q, slots), proj, evidence[f["key"]], ask_time, q, f"fact:{f['key']}")
            for q in f.get("near", []):
                # Same library or same words, a different problem: nothing needed.
                if r.random() < 0.8:
                    self.ask(fill(q, slots), p or r.pick(self.projects), [], ask_time, q,
                             f"fact:{f['key']}")
            others = [x for x in self.projects if x is not p]
            if p is not None and others and r.random() < 0.45:
                # A request that needs this fact in its project, asked in another project
                # (another stack), where the fact does not apply: nothing needed.
                q = r.pick([q for q in f["need"] if q not in needs[:k]] or f["need"])
                self.ask(fill(q, slots), r.pick(others), [], ask_time, q, f"fact:{f['key']}")
        # New topics and trivial requests: need nothing from before.
        for p in self.projects:
            bank = STACKS[p["stack"]]["new_topics"][:]
            r.shuffle(bank)
            for q in bank[: r.randint(2, 4)]:
                self.ask(q, p, [], ask_time, key=f"new:{p['stack']}")
            for q in r.sample(STACKS[p["stack"]]["funcs"], 1):
                asks = STACKS[p["stack"]].get("asks", ["write a unit test for {f}", "add logging to {f}",
                                                       "rename {f} to something clearer", "explain what {f} does",
                                                       "split {f} into smaller functions"])
                a = r.pick(asks)
                self.ask(a.format(f=q), p, [], ask_time, a, f"asks:{p['stack']}")
        for q in r.sample(GENERIC_NEW, r.randint(2, 4)):
            self.ask(q, r.pick(self.projects), [], ask_time, key="generic-new")
        for q in r.sample(TRIVIAL, r.randint(4, 7)):
            self.ask(q, r.pick(self.projects), [], ask_time, key="trivial")
        r.shuffle(self.qa)

    def shape(self, e, s):
        """The turns of one exchange as stored: each user turn in one of several wordings,
        each agent turn with an answer and tool steps sized to a length drawn the same way
        for filler and evidence (a long fact's answer cut to its key sentence when the draw
        is short)."""
        r = self.rng
        stack = s["project"]["stack"]
        fw = s["framework"]
        slots = {"file": r.pick(STACKS[stack]["files"]), "func": r.pick(STACKS[stack]["funcs"]),
                 "branch": r.pick(BRANCHES), "repo": s["project"]["url"].rsplit("/", 1)[-1]}
        out = []
        user = ""
        for (sp, tx), tpl in zip(e["turns"], e["templates"]):
            if sp.startswith("user"):
                if r.random() < 0.5:
                    tx, _ = frame(r, tx, PLANT_FRAMINGS, slots)
                user = tx
                out.append({"text": tx})
                continue
            target = target_length(r)
            extra = ""
            if r.random() < 0.35:
                extra = " " + " ".join(r.sample(FOLLOW_UPS, r.randint(1, 2)))
            answer = r.pick(OPENERS) + tx + extra
            if len(user) + 2 + len(answer) > target:
                answer = tx
                if sp.endswith("*") and len(user) + 2 + len(tx) > target:
                    answer = short_answer(tx, tpl)
            turn = {"text": answer}
            budget = target - len(user) - 2 - len(answer)
            if budget > 60:
                turn["tools"] = fill_tools(r, stack, slots, budget, fw)
            out.append(turn)
        return out

    def filler(self, exch, stack):
        r = self.rng
        st = STACKS[stack]
        slots = {"file": r.pick(st["files"]), "func": r.pick(st["funcs"]),
                 "sha": "%07x" % r.randrange(16 ** 7), "branch": r.pick(BRANCHES)}
        return [(sp, fill(tx, slots)) for sp, tx in exch]

    def ask(self, question, project, evidence, when, template=None, key=None):
        """Adds a request. `key` is the template it belongs to (`fact:<key>` for the requests
        needing a planted fact and its near misses, else its bank): the cross-fit keeps one
        template's requests in one fold, so no figure is measured on a template it learned."""
        r = self.rng
        if (question, project["url"]) in self.asked:
            return
        if not evidence and any(b.lower() in question.lower() for b in self.blocked):
            # A preference told earlier applies to this request: not a clean negative.
            return
        self.asked.add((question, project["url"]))
        # The same need is worded differently each time it is asked.
        slots = {"branch": r.pick(BRANCHES), "repo": project["url"].rsplit("/", 1)[-1]}
        text, i = frame(r, question, FRAMINGS, slots)
        self.phrasings.add((template or question, i))
        self.qa.append({
            "question": text,
            "project": project["url"],
            "framework": self.framework(),
            "date_time": date_text(when + dt.timedelta(minutes=r.randint(0, 13 * 60))),
            "evidence": list(evidence),
            "category": 4 if evidence else 6,
            "template": key,
        })

    def sample(self):
        conv = {"speaker_a": "user", "speaker_b": "agent"}
        for n, s in enumerate(self.sessions, start=1):
            conv[f"session_{n}_date_time"] = date_text(s["time"])
            conv[f"session_{n}_project"] = s["project"]["url"]
            conv[f"session_{n}_framework"] = s["framework"]
            conv[f"session_{n}"] = s["turns"]
        return {"sample_id": f"own-{self.index + 1:02d}", "conversation": conv, "qa": self.qa}


# ---------------------------------------------------------------------------------------
# Statistics: what the ranker could learn from the generator instead of from relevance.
# ---------------------------------------------------------------------------------------

def parse_date(s):
    return dt.datetime.strptime(s, "%I:%M %p on %d %B, %Y")


def sample_records(sample):
    """A sample's records as the loader captures them: a user turn and the agent turns after
    it, with the session's framework and time; each with the dialog ids it holds."""
    c = sample["conversation"]
    user = c.get("speaker_a", "user")
    out = []
    n = 1
    while f"session_{n}" in c:
        when = parse_date(c[f"session_{n}_date_time"])
        fw = c.get(f"session_{n}_framework", "claude-code")
        cur = None
        for t in c[f"session_{n}"]:
            if t["speaker"] == user:
                cur = {"framework": fw, "user": t["text"], "answers": [], "dias": [t["dia_id"]],
                       "time": when}
                out.append(cur)
            elif cur is not None:
                cur["answers"].append(t)
                cur["dias"].append(t["dia_id"])
        n += 1
    return out


def ks(a, b):
    """Two-sample Kolmogorov–Smirnov distance: the largest gap between the two empirical
    distribution functions."""
    if not a or not b:
        return float("nan")
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] <= x:
            i += 1
        while j < len(b) and b[j] <= x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    return d


def quantiles(xs):
    xs = sorted(xs)
    return [xs[min(len(xs) - 1, int(q * len(xs)))] for q in (0.1, 0.5, 0.9)] if xs else []


def lengths_and_ages(data):
    """Per record kind ("evidence": holds a turn some request needs; "filler": the rest), the
    record lengths (characters) and ages in days at asking time (the sample's first request)."""
    out = {"evidence": ([], []), "filler": ([], [])}
    for s in data:
        if not s["qa"]:
            continue
        ask = min(parse_date(q["date_time"]) for q in s["qa"])
        needed = {d for q in s["qa"] if q["category"] == 4 for d in q["evidence"]}
        for rec in sample_records(s):
            kind = "evidence" if needed & set(rec["dias"]) else "filler"
            text = record_text(rec["framework"], rec["user"], rec["answers"])
            out[kind][0].append(len(text))
            out[kind][1].append((ask - rec["time"]).total_seconds() / 86400)
    return out


def stats(data, phrasings=None, facts=None):
    qs = [q for s in data for q in s["qa"]]
    pos = sum(1 for q in qs if q["category"] == 4)
    turns = [t for s in data for k, v in s["conversation"].items()
             if k.startswith("session_") and isinstance(v, list) for t in v]
    words = set()
    for t in turns:
        words.update(w.lower() for w in WORD.findall(t["text"]))
    for q in qs:
        words.update(w.lower() for w in WORD.findall(q["question"]))
    lines = [f"{len(data)} samples, {len(turns)} turns "
             f"({sum(1 for t in turns if t.get('tools'))} with tool steps), {len(qs)} requests: "
             f"{pos} need an earlier turn ({pos / max(1, len(qs)):.0%}), {len(qs) - pos} need none",
             f"distinct request strings {len(set(q['question'] for q in qs))} of {len(qs)}; "
             f"distinct words {len(words)}"
             + (f"; distinct phrasings {phrasings}" if phrasings is not None else "")
             + (f"; distinct fact templates {facts}" if facts is not None else "")]
    la = lengths_and_ages(data)
    for what, i, fmt in (("length (chars)", 0, "{:.0f}"), ("age (days)", 1, "{:.1f}")):
        ev, fi = la["evidence"][i], la["filler"][i]
        q = lambda xs: "/".join(fmt.format(v) for v in quantiles(xs))
        lines.append(f"{what}: evidence p10/p50/p90 {q(ev)} ({len(ev)} records), "
                     f"filler {q(fi)} ({len(fi)} records); KS distance {ks(ev, fi):.3f}")
    return "\n".join(lines)


def generate(seed, samples):
    """The samples, the distinct request wordings used (base request, framing) and the
    distinct facts planted."""
    out = []
    phrasings = set()
    facts = set()
    for i in range(samples):
        b = Builder(Rng(seed * 1000 + i), i)
        b.build()
        out.append(b.sample())
        phrasings |= b.phrasings
        facts |= {e["fact"] for s in b.sessions for e in s["exchanges"] if e["fact"]}
    return out, len(phrasings), len(facts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=20260512)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--out", help="write here instead of stdout")
    ap.add_argument("--stats", action="store_true", help="print the set's statistics to stderr")
    ap.add_argument("--measure", metavar="FILE",
                    help="print the statistics of an existing histories file and exit")
    a = ap.parse_args()
    if a.measure:
        with open(a.measure, encoding="utf-8") as f:
            print(stats(json.load(f)), file=sys.stderr)
        return
    data, phrasings, facts = generate(a.seed, a.samples)
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.stats or a.out:
        print(stats(data, phrasings, facts), file=sys.stderr)


if __name__ == "__main__":
    main()
