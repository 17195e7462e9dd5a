//! `invex`: validate e-invoices and manage rule packs.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use invex_tools::validate::{
    self, use_color, ColorChoice, FailOn, Format, ValidateOptions, DEFAULT_PROFILE,
};
use invex_tools::{fixtures, lint, lock, rulepacks_dir, snapshot, Rulepacks};

// The evaluator allocates many small sequences; mimalloc serves them faster than the
// system allocator and keeps large documents' arenas from being unmapped between runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(
    name = "invex",
    version,
    about = "e-invoice validation server and tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Compile every XPath expression afresh instead of recalling what earlier runs
    /// compiled (kept in $INVEX_CACHE_DIR, else $XDG_CACHE_HOME/invex or ~/.cache/invex).
    #[arg(long, global = true)]
    no_cache: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the HTTP server (sandbox on 127.0.0.1:8080 with an embedded database under
    /// ./data when nothing is configured).
    Serve {
        /// TOML configuration file [default: $INVEX_CONFIG]; INVEX_* variables override it.
        #[arg(long, short, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Serve the rule packs of this directory (watched, hot-reloaded) instead of the
        /// embedded ones [default: $INVEX_RULEPACKS, else the embedded packs].
        #[arg(long, value_name = "DIR")]
        rulepacks: Option<PathBuf>,
    },
    /// Validate invoices (files, directories, standard input) against a profile (exit 0:
    /// nothing at or above --fail-on, 1: a document has such findings, 2: usage, I/O or
    /// parse error).
    Validate(ValidateArgs),
    /// Rule-pack tools.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Evidence packages.
    #[command(subcommand)]
    Evidence(EvidenceCommand),
    /// Convert PDF, Excel and CSV invoices into Peppol BIS 3.0 UBL (exit 0: all ready,
    /// 1: some need review, 2: a file could not be converted).
    Convert(ConvertArgs),
    /// Print a completion script for SHELL (e.g. `invex completions bash >
    /// /etc/bash_completion.d/invex`, or into `~/.zfunc/_invex` for zsh).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `invex man > /usr/local/share/man/man1/invex.1`.
    Man,
    /// Print the OpenAPI 3.1 description the server serves at /openapi.json (with the
    /// limits of the configuration), e.g. to generate a client offline.
    Openapi {
        /// TOML configuration file [default: $INVEX_CONFIG]; INVEX_* variables override it.
        #[arg(long, short, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
struct ConvertArgs {
    /// Directory for the XML files (created when missing). Invoices the review gate holds
    /// are written as `*.needs-review.xml` with a `*.review.json` beside them.
    #[arg(long, short, value_name = "DIR")]
    out: PathBuf,
    /// A shipped mapping id (see docs/conversion-template.md) or a mapping JSON file;
    /// detected from the columns when absent.
    #[arg(long, value_name = "ID|FILE")]
    mapping: Option<String>,
    /// Profile to validate against; detected per document when absent.
    #[arg(long, short)]
    profile: Option<String>,
    /// Fields under this confidence hold an invoice for review.
    #[arg(long, default_value_t = 0.8)]
    threshold: f32,
    /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
    #[arg(long, value_name = "DIR")]
    rulepacks: Option<PathBuf>,
    /// Files to convert.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum EvidenceCommand {
    /// Check an evidence ZIP offline: file hashes, the payload's hash and the timeline's
    /// hash chain (exit 0: intact, 1: tampered, 2: unreadable).
    Verify {
        #[arg(value_name = "FILE.zip")]
        file: PathBuf,
    },
}

#[derive(Args, Debug)]
#[command(after_help = "\
Output: json prints one report (JSON Lines with a `file` member for several documents), svrl \
one SVRL document per document, text one line per finding `path:line:col: severity RULE-ID \
message` (a finding without a position at path:1:1) with an indented remediation and a \
verdict line per document, junit one JUnit XML test suite with a test case per document, \
sarif one SARIF 2.1.0 log, github GitHub Actions workflow commands (annotations).

Summary: a last line counts files, valid, invalid, errors (unreadable or unparseable) and \
findings by severity; on standard output for text and github, on standard error for json, \
svrl, junit and sarif (standard output stays one parseable document). Errors of single \
documents go to standard error for those formats as well.

Exit status: 0 when no document has a finding at or above --fail-on, 1 when one has, 2 on \
usage, I/O or parse errors (a document not read or not parsed, broken rule packs, a \
directory with no file matching --glob).")]
struct ValidateArgs {
    /// Profile, `id` or `id@version`; `auto` detects it per file among the installed
    /// profiles that take the document element, from the specification identifier
    /// (BT-24) and the seller and buyer countries (BT-40, BT-55), else en16931-ubl; a
    /// document no installed profile takes is invalid (INVEX-DOCTYPE).
    #[arg(long, short, default_value = DEFAULT_PROFILE)]
    profile: String,
    /// The day whose rules apply (YYYY-MM-DD) [default: today]: a bare profile name, and
    /// detection, take the newest profile version in force on that day; `id@version`
    /// always names that version.
    #[arg(long, value_name = "DATE", value_parser = parse_day)]
    at: Option<chrono::NaiveDate>,
    /// Output format (see below).
    #[arg(long, short, value_enum, default_value_t = FormatArg::Json)]
    format: FormatArg,
    /// Exit 1 when a document has a finding of this severity or above: `fatal` (the
    /// document is invalid) or `warning` (warnings fail too).
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = FailOnArg::Fatal)]
    fail_on: FailOnArg,
    /// Which files in directories are validated: a glob over the file name, or over the
    /// path below the directory when it contains a `/` (`*` stays within a directory,
    /// `**` crosses them). Files named on the command line are always validated.
    #[arg(long, value_name = "PATTERN", default_value = validate::DEFAULT_GLOB)]
    glob: String,
    /// Colour the text format: `auto` when standard output is a terminal and NO_COLOR is
    /// unset or empty.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorArg::Auto)]
    color: ColorArg,
    /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
    #[arg(long, value_name = "DIR")]
    rulepacks: Option<PathBuf>,
    /// Files, directories (searched recursively, in sorted order, for files matching
    /// --glob; hidden entries skipped) or `-` for standard input (reported as <stdin>).
    #[arg(required = true, value_name = "PATH")]
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Json,
    Svrl,
    Text,
    Junit,
    Sarif,
    Github,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Json => Format::Json,
            FormatArg::Svrl => Format::Svrl,
            FormatArg::Text => Format::Text,
            FormatArg::Junit => Format::Junit,
            FormatArg::Sarif => Format::Sarif,
            FormatArg::Github => Format::Github,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FailOnArg {
    Fatal,
    Warning,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum DiffFormat {
    Text,
    Json,
}

/// A rule's flag, for `rules catalogue --severity`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum SeverityArg {
    Fatal,
    Warning,
    Information,
}

impl From<SeverityArg> for invex_engine::pack::Severity {
    fn from(s: SeverityArg) -> Self {
        use invex_engine::pack::Severity;
        match s {
            SeverityArg::Fatal => Severity::Fatal,
            SeverityArg::Warning => Severity::Warning,
            SeverityArg::Information => Severity::Information,
        }
    }
}

#[derive(Subcommand, Debug)]
enum RulesCommand {
    /// Check packs: schema errors, XPath errors, unknown functions, fallback rules,
    /// rules without fixtures.
    Lint {
        /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
        dir: Option<PathBuf>,
        /// Treat warnings as errors.
        #[arg(long)]
        strict: bool,
    },
    /// Run every fixture: pass fixtures must not fire their rule, fail fixtures must.
    Test {
        /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
        dir: Option<PathBuf>,
    },
    /// Vouch for the packs as they are: run every fixture, then write `pack.lock` into
    /// every pack and `profiles.lock` beside profiles.yaml (the server serves only packs
    /// that match their locks). Exit 0: locked (or, with --check, all match); 1: fixtures
    /// fail (nothing written) or, with --check, a lock is missing or differs; 2: the packs
    /// do not load.
    Lock {
        /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
        dir: Option<PathBuf>,
        /// Only compare the files with their locks; write nothing.
        #[arg(long)]
        check: bool,
    },
    /// What changed between two versions of a pack or a profile (`id@version`; a bare
    /// profile id is the version in force today): rules added, removed, and changed in
    /// flag, test, context, message, remediation or pattern.
    Diff {
        /// The earlier version.
        from: String,
        /// The later version.
        to: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
        format: DiffFormat,
        /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
        dir: Option<PathBuf>,
    },
    /// The error catalogue: every rule of every pack version with its flag, owner, business
    /// terms, message and remediation, the versions carrying it and how it changed; with
    /// RULE-ID, that rule in full (exit 1: no such rule).
    Catalogue {
        /// One rule to show in full.
        #[arg(value_name = "RULE-ID")]
        rule: Option<String>,
        /// Only rules whose id or message contains this text (any case).
        #[arg(long, short = 'q', value_name = "TEXT")]
        text: Option<String>,
        /// Only rules guarding this business term (e.g. BT-24).
        #[arg(long, value_name = "TERM")]
        business_term: Option<String>,
        /// Only rules with this owner (e.g. seller-master-data).
        #[arg(long)]
        owner: Option<String>,
        /// Only rules of this pack (`id`) or pack version (`id@version`).
        #[arg(long)]
        pack: Option<String>,
        /// Only rules with this flag, in their pack or in a profile running them.
        #[arg(long, value_enum)]
        severity: Option<SeverityArg>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
        format: DiffFormat,
        /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
        #[arg(long, value_name = "DIR")]
        rulepacks: Option<PathBuf>,
    },
    /// Print the rule catalogue (ids, flags, patterns, contexts, test hashes) as YAML.
    Snapshot {
        /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
        dir: Option<PathBuf>,
    },
    /// Measure the shipped profiles against the official artefacts: VEFA unit-test pass
    /// rate, document agreement and location paths, and every disagreement (exit 1 when
    /// anything disagrees).
    Conformance {
        /// The conformance corpus (with corpus/ and expected/).
        #[arg(long, value_name = "DIR", default_value = "../shared/conformance")]
        corpus: PathBuf,
        /// Profiles to measure [default: every profile with official artefacts].
        #[arg(long = "profile", value_name = "ID")]
        profiles: Vec<String>,
        /// Only rules whose id starts with one of these prefixes (e.g. BR-CL-).
        #[arg(long = "only", value_name = "PREFIX")]
        only: Vec<String>,
        /// Rule-pack directory [default: $INVEX_RULEPACKS, else the embedded packs].
        dir: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The server sets up its own logging from its configuration.
    if !matches!(cli.command, Command::Serve { .. }) {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_default_env()
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
            )
            .init();
    }
    let memo = !cli.no_cache && !matches!(cli.command, Command::Serve { .. });
    if memo {
        open_expression_memo();
    }
    let result = run(cli);
    if memo {
        keep_expression_memo();
    }
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("invex: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The command line compiles the same packs on every call, and parsing their expressions
/// is nearly all of that work: recall the IR earlier runs compiled (see
/// `invex_engine::xpath::memo`). The server compiles once per start and does not use it.
fn open_expression_memo() {
    use invex_engine::xpath::memo::{install, Memo};
    let Some(dir) = invex_tools::cache_dir() else {
        return;
    };
    let (memo, problem) = Memo::open(&dir);
    if let Some(problem) = problem {
        tracing::debug!("expression memo not read, compiling afresh: {problem}");
    }
    install(memo);
}

/// Write what this run compiled into the memo. A cache that cannot be written costs
/// only speed: the run's result stands, and the reason is in the debug log.
fn keep_expression_memo() {
    if let Some((used, written)) = invex_engine::xpath::memo::persist() {
        tracing::debug!(
            hits = used.hits,
            misses = used.misses,
            "expression memo: {} recalled, {} compiled",
            used.hits,
            used.misses
        );
        if let Err(e) = written {
            tracing::debug!("expression memo not written: {e}");
        }
    }
}

/// `invex serve`: configuration, logging, the runtime, and a graceful stop on a signal.
fn serve(file: Option<PathBuf>, rulepacks: Option<PathBuf>) -> anyhow::Result<()> {
    use anyhow::Context;
    use invex_server::config::{Config, LogFormat};

    let file = file.or_else(|| std::env::var_os("INVEX_CONFIG").map(PathBuf::from));
    let mut config = Config::load(file.as_deref()).context("configuration")?;
    if rulepacks.is_some() {
        config.rulepacks = rulepacks;
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    match config.effective_log_format() {
        LogFormat::Json => logs
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .init(),
        LogFormat::Text => logs.init(),
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let mut running = invex_server::start(config, None).await?;
        match &running.bootstrap_key {
            // Shown once: only its hash is stored.
            Some(key) if running.bootstrap_key_generated => {
                eprintln!(
                    "invex: created the bootstrap admin key (shown once, store it now): {key}"
                )
            }
            // The configuration's owner knows it; a secret from the environment is never echoed.
            Some(_) => eprintln!("invex: created the bootstrap admin key from INVEX_BOOTSTRAP_KEY"),
            None => {}
        }
        let base = format!(
            "{}://{}",
            if running.state.config.tls.is_some() { "https" } else { "http" },
            running.addr
        );
        if let Some(link) = &running.first_admin_link {
            // One use, seven days: the first admin chooses an address and a password there.
            eprintln!(
                "invex: the first administrator signs in once at {base}{link} (one use, valid 7 days)"
            );
        }
        eprintln!(
            "invex: listening on {base} ({} mode); console at {base}/, API reference at {base}/docs",
            running.state.config.mode.as_str(),
        );
        tokio::select! {
            _ = invex_server::server::shutdown_signal() => {
                tracing::info!("shutting down: finishing in-flight requests");
                running.shutdown().await?;
            }
            result = running.wait() => result?,
        }
        Ok::<(), anyhow::Error>(())
    })
}

/// A JSON invoice as the UBL it stands for (`invex validate` of a `.json` file or stdin),
/// written as the server writes it for `POST /v1/invoice/validate`.
fn json_invoice_to_ubl(bytes: &[u8]) -> Result<Vec<u8>, String> {
    use invex_server::invoice::json::{to_xml, Declared};
    to_xml(bytes, Declared::Json)
        .map(std::borrow::Cow::into_owned)
        .map_err(|e| format!("not a JSON invoice: {e}"))
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Serve { config, rulepacks } => serve(config, rulepacks).map(|()| 0),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "invex", &mut std::io::stdout());
            Ok(0)
        }
        Command::Man => {
            use clap::CommandFactory;
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut page)?;
            std::io::Write::write_all(&mut std::io::stdout(), &page)?;
            Ok(0)
        }
        Command::Openapi { config } => {
            let config = invex_server::config::Config::load(config.as_deref())?;
            let doc = invex_server::openapi::document(&config.limits);
            println!("{}", serde_json::to_string_pretty(&doc)?);
            Ok(0)
        }
        Command::Validate(args) => {
            let color = match args.color {
                ColorArg::Auto => ColorChoice::Auto,
                ColorArg::Always => ColorChoice::Always,
                ColorArg::Never => ColorChoice::Never,
            };
            let opts = ValidateOptions {
                profile: args.profile,
                format: args.format.into(),
                rulepacks: rulepacks_dir(args.rulepacks)?,
                progress: std::io::stderr().is_terminal(),
                at: args.at.unwrap_or_else(invex_engine::registry::today),
                glob: args.glob,
                fail_on: match args.fail_on {
                    FailOnArg::Fatal => FailOn::Fatal,
                    FailOnArg::Warning => FailOn::Warning,
                },
                color: use_color(
                    color,
                    std::io::stdout().is_terminal(),
                    std::env::var_os("NO_COLOR").as_deref(),
                ),
                prepare: Some(json_invoice_to_ubl),
            };
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let mut err = std::io::stderr();
            let outcome = validate::run(
                &opts,
                &args.files,
                &mut std::io::stdin().lock(),
                &mut out,
                &mut err,
            )?;
            Ok(outcome.exit_code())
        }
        Command::Rules(RulesCommand::Lint { dir, strict }) => {
            let report = lint::lint(&rulepacks_dir(dir)?);
            emit(&report.render());
            Ok(u8::from(report.failed(strict)))
        }
        Command::Rules(RulesCommand::Test { dir }) => {
            let report = fixtures::run_fixtures(&rulepacks_dir(dir)?);
            emit(&report.render());
            Ok(u8::from(!report.ok()))
        }
        Command::Rules(RulesCommand::Conformance {
            corpus,
            profiles,
            only,
            dir,
        }) => conformance(&corpus, &profiles, &only, &rulepacks_dir(dir)?),
        Command::Rules(RulesCommand::Lock { dir, check }) => {
            let source = Rulepacks::choose(dir);
            if source == Rulepacks::Embedded && !check {
                eprintln!(
                    "invex: the embedded rule packs are locked by the build; name the directory \
                     to lock (invex rules lock DIR, or INVEX_RULEPACKS)"
                );
                return Ok(2);
            }
            let dir = source.dir()?;
            let run = if check {
                lock::check(&dir)
            } else {
                lock::lock(&dir)
            };
            emit(&run.output);
            Ok(run.outcome.exit_code())
        }
        Command::Rules(RulesCommand::Diff {
            from,
            to,
            format,
            dir,
        }) => {
            let dir = rulepacks_dir(dir)?;
            let catalog = invex_engine::registry::Catalog::load(&dir)?;
            let d = invex_tools::diff::diff(&catalog, &from, &to)?;
            match format {
                DiffFormat::Text => emit(&d.text()),
                DiffFormat::Json => emit(&format!("{}\n", serde_json::to_string_pretty(&d)?)),
            }
            Ok(0)
        }
        Command::Rules(RulesCommand::Catalogue {
            rule,
            text,
            business_term,
            owner,
            pack,
            severity,
            format,
            rulepacks,
        }) => {
            use invex_engine::catalogue::{Catalogue, Filter};
            use invex_tools::catalogue as cat;
            let catalog = invex_engine::registry::Catalog::load(&rulepacks_dir(rulepacks)?)?;
            let catalogue = Catalogue::of(&catalog);
            if let Some(id) = rule {
                let Some(entry) = catalogue.get(&id) else {
                    eprintln!("no rule `{id}` in the installed packs");
                    return Ok(1);
                };
                match format {
                    DiffFormat::Text => emit(&cat::show_text(entry)),
                    DiffFormat::Json => emit(&format!("{}\n", cat::show_json(entry)?)),
                }
                return Ok(0);
            }
            let filter = Filter {
                text,
                business_term,
                owner,
                pack,
                severity: severity.map(Into::into),
            };
            match format {
                DiffFormat::Text => emit(&cat::list_text(&catalogue, &filter)),
                DiffFormat::Json => emit(&format!("{}\n", cat::list_json(&catalogue, &filter)?)),
            }
            Ok(0)
        }
        Command::Rules(RulesCommand::Snapshot { dir }) => {
            let yaml = snapshot::snapshot(&rulepacks_dir(dir)?)?;
            emit(&yaml);
            Ok(0)
        }
        Command::Evidence(EvidenceCommand::Verify { file }) => Ok(verify_evidence(&file)),
        Command::Convert(args) => convert(args),
    }
}

fn convert(args: ConvertArgs) -> anyhow::Result<u8> {
    use anyhow::Context as _;
    use invex_server::convert::{batch, extract};
    let mapping = match &args.mapping {
        None => None,
        Some(m) if std::path::Path::new(m).is_file() => {
            let text = std::fs::read_to_string(m).with_context(|| format!("reading {m}"))?;
            Some(extract::mapping_choice(&text)?)
        }
        Some(m) => Some(extract::mapping_choice(m)?),
    };
    if !(0.0..=1.0).contains(&args.threshold) {
        anyhow::bail!("--threshold must be between 0.0 and 1.0");
    }
    let dir = rulepacks_dir(args.rulepacks)?;
    let catalog = invex_engine::registry::Catalog::load(&dir)
        .with_context(|| format!("loading rule packs from {}", dir.display()))?;
    let opts = batch::BatchOptions {
        out: args.out,
        mapping,
        profile: args.profile,
        threshold: args.threshold,
        progress: std::io::stderr().is_terminal() && args.files.len() > 1,
        limits: Default::default(),
    };
    let summary = batch::run(&opts, &catalog, &args.files, &mut std::io::stderr())?;
    emit(&summary.table());
    Ok(summary.exit_code())
}

fn verify_evidence(file: &std::path::Path) -> u8 {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    match invex_server::sending::evidence::verify_zip(&bytes) {
        Ok(v) => {
            emit(&format!(
                "intact: invoice {} ({}), {} timeline entries, chain head {}\n",
                v.invoice_id, v.status, v.events, v.chain_head
            ));
            0
        }
        Err(faults) => {
            let mut out = format!("NOT intact: {}\n", file.display());
            for f in faults {
                out.push_str(&format!("  - {f}\n"));
            }
            emit(&out);
            1
        }
    }
}

fn conformance(
    corpus: &std::path::Path,
    profiles: &[String],
    only: &[String],
    dir: &std::path::Path,
) -> anyhow::Result<u8> {
    use invex_tools::conformance::{measure, Corpus, TARGETS};
    let corpus = Corpus::new(corpus);
    if !corpus.exists() {
        anyhow::bail!("no conformance corpus at {}", corpus_path_hint(profiles));
    }
    let catalog = invex_engine::registry::Catalog::load(dir)?;
    let mut all_agree = true;
    for target in TARGETS {
        if !profiles.is_empty() && !profiles.iter().any(|p| target.is_named(p)) {
            continue;
        }
        let Some(ruleset) = catalog.ruleset(target.profile) else {
            emit(&format!(
                "profile {}: not in {}, skipped\n",
                target.profile,
                dir.display()
            ));
            continue;
        };
        let m = measure(&corpus, &ruleset, target, only)?;
        emit(&m.render());
        all_agree &= m.agreement.disagreements.is_empty() && m.unit.iter().all(|u| u.passed);
    }
    Ok(u8::from(!all_agree))
}

/// Write to stdout; a closed pipe (`invex ... | head`) is not an error.
fn emit(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn corpus_path_hint(profiles: &[String]) -> String {
    if profiles.is_empty() {
        "the given path (use --corpus DIR)".to_string()
    } else {
        format!("the given path for {}", profiles.join(", "))
    }
}

/// `--at`: a calendar day, `YYYY-MM-DD`.
fn parse_day(s: &str) -> Result<chrono::NaiveDate, String> {
    invex_engine::pack::parse_date(s).ok_or_else(|| format!("`{s}` is not a date YYYY-MM-DD"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn validate_defaults() {
        let cli = Cli::try_parse_from(["invex", "validate", "a.xml", "b.xml"]).unwrap();
        match cli.command {
            Command::Validate(a) => {
                assert_eq!(a.profile, DEFAULT_PROFILE);
                assert!(matches!(a.format, FormatArg::Json));
                assert_eq!(a.files.len(), 2);
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["invex", "validate"]).is_err());
        assert!(Cli::try_parse_from(["invex", "validate", "--format", "xml", "a"]).is_err());
    }
}
