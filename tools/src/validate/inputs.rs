//! What `invex validate` reads: files as named, directories searched recursively for
//! file names matching a glob, and `-` for standard input.

use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// The name under which standard input is reported.
pub const STDIN_NAME: &str = "<stdin>";

/// The glob files in directories must match when none is given.
pub const DEFAULT_GLOB: &str = "*.xml";

/// One document to validate.
#[derive(Debug)]
pub struct Input {
    /// How the document is named in every output: the path as given (or as found under a
    /// directory given), or [`STDIN_NAME`].
    pub name: String,
    source: Source,
}

#[derive(Debug)]
enum Source {
    File(PathBuf),
    /// Standard input, read before validation starts.
    Bytes(Vec<u8>),
    /// Could not be read (standard input) or listed (a directory).
    Failed(String),
}

impl Input {
    fn file(path: PathBuf) -> Input {
        Input {
            name: path.display().to_string(),
            source: Source::File(path),
        }
    }

    /// The document's bytes, or why there are none.
    pub fn bytes(&self) -> Result<Cow<'_, [u8]>, String> {
        match &self.source {
            Source::File(path) => std::fs::read(path)
                .map(Cow::Owned)
                .map_err(|e| format!("cannot read: {e}")),
            Source::Bytes(b) => Ok(Cow::Borrowed(b)),
            Source::Failed(why) => Err(why.clone()),
        }
    }

    /// The file system path, when the document is a file.
    pub fn path(&self) -> Option<&Path> {
        match &self.source {
            Source::File(p) => Some(p),
            _ => None,
        }
    }

    pub fn is_stdin(&self) -> bool {
        self.name == STDIN_NAME && !matches!(self.source, Source::File(_))
    }
}

/// Why the inputs could not even be listed (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("--glob `{pattern}`: {source}")]
    Glob {
        pattern: String,
        #[source]
        source: globset::Error,
    },
    #[error("`-` (standard input) is given more than once")]
    StdinTwice,
    #[error("nothing to validate: no file under {dirs} matches --glob `{pattern}`")]
    NothingFound { dirs: String, pattern: String },
}

/// Which files in directories are validated: a glob over the file name, or over the path
/// below the directory when the pattern contains a `/`.
#[derive(Debug, Clone)]
pub struct FileFilter {
    pattern: String,
    matcher: GlobMatcher,
    whole_path: bool,
}

impl FileFilter {
    pub fn new(pattern: &str) -> Result<FileFilter, InputError> {
        let whole_path = pattern.contains('/');
        let glob = GlobBuilder::new(pattern)
            // `*` stays within one path segment; `**` crosses them.
            .literal_separator(true)
            .build()
            .map_err(|source| InputError::Glob {
                pattern: pattern.to_string(),
                source,
            })?;
        Ok(FileFilter {
            pattern: pattern.to_string(),
            matcher: glob.compile_matcher(),
            whole_path,
        })
    }

    /// Whether `relative` (a path below a directory given) is to be validated.
    pub fn matches(&self, relative: &Path) -> bool {
        if self.whole_path {
            self.matcher.is_match(relative)
        } else {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(Path::new(name)))
        }
    }
}

/// Expand the arguments into documents, in order: each file as given, each directory's
/// matching files sorted by path (hidden entries, whose names start with `.`, and
/// symbolic links to directories are skipped), `-` as standard input read from `stdin`.
/// A path that does not exist stays an input (it reports `cannot read`).
pub fn expand(
    args: &[PathBuf],
    filter: &FileFilter,
    stdin: &mut dyn Read,
) -> Result<Vec<Input>, InputError> {
    let mut inputs = Vec::new();
    let mut stdin_taken = false;
    let mut dirs_without_matches = Vec::new();
    let mut any_dir = false;
    for arg in args {
        if arg.as_os_str() == "-" {
            if stdin_taken {
                return Err(InputError::StdinTwice);
            }
            stdin_taken = true;
            let mut bytes = Vec::new();
            let source = match stdin.read_to_end(&mut bytes) {
                Ok(_) => Source::Bytes(bytes),
                Err(e) => Source::Failed(format!("cannot read standard input: {e}")),
            };
            inputs.push(Input {
                name: STDIN_NAME.to_string(),
                source,
            });
        } else if arg.is_dir() {
            any_dir = true;
            let before = inputs.len();
            walk(arg, Path::new(""), filter, &mut inputs);
            if inputs.len() == before {
                dirs_without_matches.push(arg.display().to_string());
            }
        } else {
            inputs.push(Input::file(arg.clone()));
        }
    }
    if inputs.is_empty() && any_dir {
        return Err(InputError::NothingFound {
            dirs: dirs_without_matches.join(", "),
            pattern: filter.pattern.clone(),
        });
    }
    Ok(inputs)
}

/// Add the matching files below `root/relative`, sorted by name at each level.
fn walk(root: &Path, relative: &Path, filter: &FileFilter, inputs: &mut Vec<Input>) {
    let dir = root.join(relative);
    let listing = match std::fs::read_dir(&dir) {
        Ok(listing) => listing,
        Err(e) => {
            inputs.push(Input {
                name: dir.display().to_string(),
                source: Source::Failed(format!("cannot list the directory: {e}")),
            });
            return;
        }
    };
    let mut entries: Vec<std::fs::DirEntry> = Vec::new();
    let mut failures = Vec::new();
    for entry in listing {
        match entry {
            Ok(e) => entries.push(e),
            Err(e) => failures.push(e),
        }
    }
    for e in failures {
        inputs.push(Input {
            name: dir.display().to_string(),
            source: Source::Failed(format!("cannot list the directory: {e}")),
        });
    }
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let rel = relative.join(&name);
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(root, &rel, filter, inputs);
        } else if (kind.is_file() || (kind.is_symlink() && entry.path().is_file()))
            && filter.matches(&rel)
        {
            inputs.push(Input::file(root.join(&rel)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::write;

    fn names(inputs: &[Input]) -> Vec<String> {
        inputs.iter().map(|i| i.name.clone()).collect()
    }

    #[test]
    fn directories_are_searched_recursively_in_sorted_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "b.xml",
            "a.xml",
            "notes.txt",
            "sub/z.xml",
            "sub/deeper/c.XML",
            "sub/deeper/d.xml",
            ".hidden/x.xml",
            ".also-hidden.xml",
        ] {
            write(root, f, "<x/>");
        }
        let filter = FileFilter::new(DEFAULT_GLOB).unwrap();
        let inputs = expand(&[root.to_path_buf()], &filter, &mut std::io::empty()).unwrap();
        let base = root.display().to_string();
        assert_eq!(
            names(&inputs),
            vec![
                format!("{base}/a.xml"),
                format!("{base}/b.xml"),
                format!("{base}/sub/deeper/d.xml"),
                format!("{base}/sub/z.xml"),
            ]
        );
    }

    #[test]
    fn globs_over_names_and_over_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "inv-1.xml",
            "cn-1.xml",
            "2026/inv-2.xml",
            "2026/x/inv-3.xml",
        ] {
            write(root, f, "<x/>");
        }
        let base = root.display().to_string();
        let by_name = FileFilter::new("inv-*.xml").unwrap();
        let inputs = expand(&[root.to_path_buf()], &by_name, &mut std::io::empty()).unwrap();
        assert_eq!(
            names(&inputs),
            vec![
                format!("{base}/2026/inv-2.xml"),
                format!("{base}/2026/x/inv-3.xml"),
                format!("{base}/inv-1.xml"),
            ]
        );
        // With a `/`, the pattern is over the path below the directory; `*` stays in
        // one segment.
        let by_path = FileFilter::new("2026/*.xml").unwrap();
        let inputs = expand(&[root.to_path_buf()], &by_path, &mut std::io::empty()).unwrap();
        assert_eq!(names(&inputs), vec![format!("{base}/2026/inv-2.xml")]);
        let deep = FileFilter::new("2026/**/*.xml").unwrap();
        let inputs = expand(&[root.to_path_buf()], &deep, &mut std::io::empty()).unwrap();
        assert_eq!(inputs.len(), 2);
        assert!(matches!(
            FileFilter::new("a[").unwrap_err(),
            InputError::Glob { .. }
        ));
    }

    #[test]
    fn files_are_taken_as_given_and_stdin_once() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), "notes.txt", "<x/>");
        let filter = FileFilter::new(DEFAULT_GLOB).unwrap();
        let mut stdin: &[u8] = b"<y/>";
        let inputs = expand(
            &[f.clone(), PathBuf::from("-"), PathBuf::from("missing.xml")],
            &filter,
            &mut stdin,
        )
        .unwrap();
        // A file named explicitly is validated whatever the glob says.
        assert_eq!(inputs[0].name, f.display().to_string());
        assert_eq!(inputs[1].name, STDIN_NAME);
        assert!(inputs[1].is_stdin());
        assert_eq!(&*inputs[1].bytes().unwrap(), b"<y/>");
        assert!(inputs[2].bytes().unwrap_err().starts_with("cannot read: "));
        let twice = expand(
            &[PathBuf::from("-"), PathBuf::from("-")],
            &filter,
            &mut std::io::empty(),
        );
        assert!(matches!(twice.unwrap_err(), InputError::StdinTwice));
    }

    #[test]
    fn a_directory_without_matches_is_an_error_when_nothing_else_is_given() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", "x");
        let filter = FileFilter::new(DEFAULT_GLOB).unwrap();
        let e = expand(&[dir.path().to_path_buf()], &filter, &mut std::io::empty()).unwrap_err();
        assert!(e.to_string().contains("matches --glob `*.xml`"), "{e}");
    }
}
