//! One SFTP session of a signed-in account: the three folders, reading results and archived
//! files, and writing into `inbox/`. A file written under a temporary name (`.name`,
//! `name.tmp`, `name.part`, `name.filepart`) waits for its rename to the final name; any
//! other is delivered when it is closed. Nothing else can be changed: results and archived
//! files stay as they are.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};

use russh_sftp::protocol::{
    Attrs, Data, File, FileAttributes, Handle, Name, OpenFlags, Status, StatusCode, Version,
};
use russh_sftp::server::StatusReply;

use super::folders::{self, Entry};
use crate::auth::Role;
use crate::state::AppState;
use crate::store::SftpAccountRecord;

/// Handles open at once in a session.
const MAX_HANDLES: usize = 64;
/// Files closed under a temporary name and not yet renamed, per session: each holds a
/// temporary file until the session ends.
const MAX_WAITING: usize = 16;
/// The largest read answered at once (OpenSSH asks for 32 KiB or 256 KiB).
const MAX_READ: u32 = 256 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Folder {
    Inbox,
    Outbox,
    Archive,
}

impl Folder {
    fn name(self) -> &'static str {
        match self {
            Folder::Inbox => "inbox",
            Folder::Outbox => "outbox",
            Folder::Archive => "archive",
        }
    }

    fn parse(s: &str) -> Option<Folder> {
        match s {
            "inbox" => Some(Folder::Inbox),
            "outbox" => Some(Folder::Outbox),
            "archive" => Some(Folder::Archive),
            _ => None,
        }
    }
}

/// A path of this tree: the root, a folder, or a file in one.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Place {
    Root,
    Folder(Folder),
    File(Folder, String),
}

/// `path` (absolute, or relative to the root, where every session starts) resolved;
/// `.` and `..` are followed, never above the root. None: no such place.
fn resolve(path: &str) -> Option<Place> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    match parts.as_slice() {
        [] => Some(Place::Root),
        [f] => Folder::parse(f).map(Place::Folder),
        [f, name] => Folder::parse(f).map(|f| Place::File(f, (*name).to_string())),
        _ => None,
    }
}

fn place_path(p: &Place) -> String {
    match p {
        Place::Root => "/".into(),
        Place::Folder(f) => format!("/{}", f.name()),
        Place::File(f, n) => format!("/{}/{n}", f.name()),
    }
}

/// A name that says the upload is not finished.
fn temporary(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    name.starts_with('.')
        || [".tmp", ".part", ".filepart", ".partial", ".upload"]
            .iter()
            .any(|s| lower.ends_with(s))
}

fn dir_attrs(mtime: u32) -> FileAttributes {
    let mut a = FileAttributes {
        size: Some(0),
        uid: Some(0),
        gid: Some(0),
        permissions: Some(0o755),
        atime: Some(mtime),
        mtime: Some(mtime),
        ..FileAttributes::default()
    };
    a.set_dir(true);
    a
}

fn file_attrs(size: u64, mtime: u32, writable: bool) -> FileAttributes {
    let mut a = FileAttributes {
        size: Some(size),
        uid: Some(0),
        gid: Some(0),
        permissions: Some(if writable { 0o644 } else { 0o444 }),
        atime: Some(mtime),
        mtime: Some(mtime),
        ..FileAttributes::default()
    };
    a.set_regular(true);
    a
}

fn now_secs() -> u32 {
    u32::try_from(chrono::Utc::now().timestamp()).unwrap_or(0)
}

fn status(id: u32) -> Status {
    Status {
        id,
        status_code: StatusCode::Ok,
        error_message: "Ok".into(),
        language_tag: "en-US".into(),
    }
}

fn refuse(code: StatusCode, why: impl Into<String>) -> StatusReply {
    StatusReply::new(code).with_message(why)
}

enum Open {
    /// A file being written into `inbox/`.
    Writing {
        name: String,
        file: std::fs::File,
        size: u64,
    },
    /// A file being read.
    Reading { file: std::fs::File, size: u64 },
    /// A directory listing, handed out once.
    Listing(Option<Vec<File>>),
}

pub struct SftpSession {
    state: AppState,
    account: SftpAccountRecord,
    handles: HashMap<String, Open>,
    next: u64,
    /// Files closed under a temporary name, waiting for their rename.
    waiting: HashMap<String, std::fs::File>,
}

impl SftpSession {
    pub fn new(state: AppState, account: SftpAccountRecord) -> Self {
        SftpSession {
            state,
            account,
            handles: HashMap::new(),
            next: 0,
            waiting: HashMap::new(),
        }
    }

    fn may_deliver(&self) -> Result<(), StatusReply> {
        match Role::parse(&self.account.role) {
            Some(Role::Auditor) | None => Err(refuse(
                StatusCode::PermissionDenied,
                "this account reads only (role auditor)",
            )),
            Some(_) => Ok(()),
        }
    }

    fn add(&mut self, id: u32, open: Open) -> Result<Handle, StatusReply> {
        if self.handles.len() >= MAX_HANDLES {
            return Err(refuse(
                StatusCode::Failure,
                format!("at most {MAX_HANDLES} files open at once"),
            ));
        }
        self.next += 1;
        let handle = format!("h{}", self.next);
        self.handles.insert(handle.clone(), open);
        Ok(Handle { id, handle })
    }

    async fn entries(&self, folder: Folder) -> Result<Vec<Entry>, StatusReply> {
        let limit = self.state.config.sftp.max_listed;
        let store = &self.state.store;
        let listed = match folder {
            Folder::Inbox => return Ok(Vec::new()),
            Folder::Outbox => folders::outbox(store, &self.account, limit).await,
            Folder::Archive => folders::archive(store, &self.account.id, limit).await,
        };
        listed.map_err(|e| {
            tracing::error!(error = %e, "sftp listing failed");
            refuse(StatusCode::Failure, "the folder cannot be read now")
        })
    }

    async fn entry(&self, folder: Folder, name: &str) -> Result<Entry, StatusReply> {
        self.entries(folder)
            .await?
            .into_iter()
            .find(|e| e.name == name)
            .ok_or_else(|| {
                refuse(
                    StatusCode::NoSuchFile,
                    format!("no {name} in {}", folder.name()),
                )
            })
    }

    async fn attrs(&self, place: &Place) -> Result<FileAttributes, StatusReply> {
        match place {
            Place::Root | Place::Folder(_) => Ok(dir_attrs(now_secs())),
            Place::File(Folder::Inbox, name) => match self.waiting.get(name) {
                Some(f) => Ok(file_attrs(
                    f.metadata().map(|m| m.len()).unwrap_or(0),
                    now_secs(),
                    true,
                )),
                None => Err(refuse(
                    StatusCode::NoSuchFile,
                    format!("no {name} in inbox"),
                )),
            },
            Place::File(folder, name) => {
                let e = self.entry(*folder, name).await?;
                Ok(file_attrs(e.size, e.mtime, false))
            }
        }
    }

    /// Deliver a complete file of `inbox/`.
    async fn deliver(&self, name: &str, file: std::fs::File) -> Result<(), StatusReply> {
        super::deliver::deliver(
            &self.state.store,
            &self.state.config.batches,
            self.state.environment(),
            &self.account,
            name,
            file,
        )
        .await
        .map(|_| ())
        .map_err(|e| {
            tracing::warn!(error = %e, file = name, "sftp delivery refused");
            refuse(StatusCode::Failure, e.to_string())
        })
    }
}

impl russh_sftp::server::Handler for SftpSession {
    type Error = StatusReply;

    fn unimplemented(&self) -> Self::Error {
        refuse(StatusCode::OpUnsupported, "not supported here")
    }

    async fn init(
        &mut self,
        _version: u32,
        _extensions: HashMap<String, String>,
    ) -> Result<Version, Self::Error> {
        Ok(Version::new())
    }

    async fn realpath(&mut self, id: u32, path: String) -> Result<Name, Self::Error> {
        // Paths above the tree resolve to it; what is not in it is still a path to name.
        let shown = match resolve(&path) {
            Some(p) => place_path(&p),
            None => format!("/{}", path.trim_start_matches('/')),
        };
        Ok(Name {
            id,
            files: vec![File::dummy(shown)],
        })
    }

    async fn stat(&mut self, id: u32, path: String) -> Result<Attrs, Self::Error> {
        let place = resolve(&path).ok_or_else(|| refuse(StatusCode::NoSuchFile, "no such path"))?;
        Ok(Attrs {
            id,
            attrs: self.attrs(&place).await?,
        })
    }

    async fn lstat(&mut self, id: u32, path: String) -> Result<Attrs, Self::Error> {
        self.stat(id, path).await
    }

    async fn fstat(&mut self, id: u32, handle: String) -> Result<Attrs, Self::Error> {
        let attrs = match self.handles.get(&handle) {
            Some(Open::Writing { size, .. }) => file_attrs(*size, now_secs(), true),
            Some(Open::Reading { size, .. }) => file_attrs(*size, now_secs(), false),
            Some(Open::Listing(_)) => dir_attrs(now_secs()),
            None => return Err(refuse(StatusCode::Failure, "no such handle")),
        };
        Ok(Attrs { id, attrs })
    }

    async fn setstat(
        &mut self,
        id: u32,
        _path: String,
        _attrs: FileAttributes,
    ) -> Result<Status, Self::Error> {
        // Times and modes (`put -p`) mean nothing here; taken without complaint.
        Ok(status(id))
    }

    async fn fsetstat(
        &mut self,
        id: u32,
        _handle: String,
        _attrs: FileAttributes,
    ) -> Result<Status, Self::Error> {
        Ok(status(id))
    }

    async fn opendir(&mut self, id: u32, path: String) -> Result<Handle, Self::Error> {
        let files = match resolve(&path) {
            Some(Place::Root) => [Folder::Inbox, Folder::Outbox, Folder::Archive]
                .iter()
                .map(|f| File::new(f.name(), dir_attrs(now_secs())))
                .collect(),
            Some(Place::Folder(Folder::Inbox)) => self
                .waiting
                .iter()
                .map(|(n, f)| {
                    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
                    File::new(n.clone(), file_attrs(size, now_secs(), true))
                })
                .collect(),
            Some(Place::Folder(folder)) => self
                .entries(folder)
                .await?
                .into_iter()
                .map(|e| File::new(e.name, file_attrs(e.size, e.mtime, false)))
                .collect(),
            _ => return Err(refuse(StatusCode::NoSuchFile, "no such folder")),
        };
        self.add(id, Open::Listing(Some(files)))
    }

    async fn readdir(&mut self, id: u32, handle: String) -> Result<Name, Self::Error> {
        match self.handles.get_mut(&handle) {
            Some(Open::Listing(files)) => match files.take() {
                Some(files) if !files.is_empty() => Ok(Name { id, files }),
                _ => Err(StatusCode::Eof.into()),
            },
            _ => Err(refuse(StatusCode::Failure, "not a folder handle")),
        }
    }

    async fn open(
        &mut self,
        id: u32,
        filename: String,
        pflags: OpenFlags,
        _attrs: FileAttributes,
    ) -> Result<Handle, Self::Error> {
        let place =
            resolve(&filename).ok_or_else(|| refuse(StatusCode::NoSuchFile, "no such path"))?;
        let writing = pflags.intersects(
            OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::TRUNCATE | OpenFlags::APPEND,
        );
        match (place, writing) {
            (Place::File(Folder::Inbox, name), true) => {
                self.may_deliver()?;
                if self.waiting.len() >= MAX_WAITING {
                    return Err(refuse(
                        StatusCode::Failure,
                        format!(
                            "{MAX_WAITING} uploads wait for their rename already; rename or \
                             remove one first"
                        ),
                    ));
                }
                if name.chars().any(char::is_control) || name.len() > 255 {
                    return Err(refuse(StatusCode::Failure, "not a usable file name"));
                }
                let file = tempfile::tempfile().map_err(|e| {
                    refuse(StatusCode::Failure, format!("no room for the file: {e}"))
                })?;
                self.waiting.remove(&name);
                self.add(
                    id,
                    Open::Writing {
                        name,
                        file,
                        size: 0,
                    },
                )
            }
            (Place::File(Folder::Inbox, name), false) => {
                let file = self
                    .waiting
                    .get(&name)
                    .and_then(|f| f.try_clone().ok())
                    .ok_or_else(|| refuse(StatusCode::NoSuchFile, format!("no {name} in inbox")))?;
                let size = file.metadata().map(|m| m.len()).unwrap_or(0);
                self.add(id, Open::Reading { file, size })
            }
            (Place::File(folder, _), true) => Err(refuse(
                StatusCode::PermissionDenied,
                format!("{} is read-only; deliver files into inbox/", folder.name()),
            )),
            (Place::File(folder, name), false) => {
                let entry = self.entry(folder, &name).await?;
                let file = folders::spool(&self.state.store, &entry.content)
                    .await
                    .map_err(|e| {
                        tracing::error!(error = %e, "sftp read failed");
                        refuse(StatusCode::Failure, "the file cannot be read now")
                    })?;
                let size = file.metadata().map(|m| m.len()).unwrap_or(0);
                self.add(id, Open::Reading { file, size })
            }
            _ => Err(refuse(
                StatusCode::PermissionDenied,
                "only files in inbox/, outbox/ and archive/ can be opened",
            )),
        }
    }

    async fn read(
        &mut self,
        id: u32,
        handle: String,
        offset: u64,
        len: u32,
    ) -> Result<Data, Self::Error> {
        let Some(Open::Reading { file, size }) = self.handles.get_mut(&handle) else {
            return Err(refuse(StatusCode::Failure, "not a file opened for reading"));
        };
        if offset >= *size {
            return Err(StatusCode::Eof.into());
        }
        let want = len.min(MAX_READ) as u64;
        let n = want.min(*size - offset) as usize;
        let mut data = vec![0u8; n];
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(&mut data))
            .map_err(|e| refuse(StatusCode::Failure, e.to_string()))?;
        Ok(Data { id, data })
    }

    async fn write(
        &mut self,
        id: u32,
        handle: String,
        offset: u64,
        data: Vec<u8>,
    ) -> Result<Status, Self::Error> {
        let limit = self.state.config.batches.max_bytes;
        let Some(Open::Writing { file, size, .. }) = self.handles.get_mut(&handle) else {
            return Err(refuse(StatusCode::Failure, "not a file opened for writing"));
        };
        let end = offset.saturating_add(data.len() as u64);
        if end > limit {
            return Err(refuse(
                StatusCode::Failure,
                format!("a file is at most {limit} bytes (INVEX_BATCHES_MAX_BYTES)"),
            ));
        }
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.write_all(&data))
            .map_err(|e| refuse(StatusCode::Failure, e.to_string()))?;
        *size = (*size).max(end);
        Ok(status(id))
    }

    async fn close(&mut self, id: u32, handle: String) -> Result<Status, Self::Error> {
        match self.handles.remove(&handle) {
            Some(Open::Writing { name, file, .. }) => {
                if temporary(&name) {
                    self.waiting.insert(name, file);
                } else {
                    self.deliver(&name, file).await?;
                }
                Ok(status(id))
            }
            Some(_) => Ok(status(id)),
            None => Err(refuse(StatusCode::Failure, "no such handle")),
        }
    }

    async fn rename(
        &mut self,
        id: u32,
        oldpath: String,
        newpath: String,
    ) -> Result<Status, Self::Error> {
        let (Some(Place::File(Folder::Inbox, from)), Some(Place::File(Folder::Inbox, to))) =
            (resolve(&oldpath), resolve(&newpath))
        else {
            return Err(refuse(
                StatusCode::PermissionDenied,
                "only a file uploaded to inbox/ under a temporary name can be renamed, within inbox/",
            ));
        };
        let file = self
            .waiting
            .remove(&from)
            .ok_or_else(|| refuse(StatusCode::NoSuchFile, format!("no {from} in inbox")))?;
        if temporary(&to) {
            self.waiting.insert(to, file);
        } else {
            self.deliver(&to, file).await?;
        }
        Ok(status(id))
    }

    async fn remove(&mut self, id: u32, filename: String) -> Result<Status, Self::Error> {
        match resolve(&filename) {
            Some(Place::File(Folder::Inbox, name)) if self.waiting.remove(&name).is_some() => {
                Ok(status(id))
            }
            _ => Err(refuse(
                StatusCode::PermissionDenied,
                "results and archived files stay; only an unfinished upload in inbox/ can be removed",
            )),
        }
    }

    async fn mkdir(
        &mut self,
        _id: u32,
        _path: String,
        _attrs: FileAttributes,
    ) -> Result<Status, Self::Error> {
        Err(refuse(
            StatusCode::PermissionDenied,
            "the folders are fixed",
        ))
    }

    async fn rmdir(&mut self, _id: u32, _path: String) -> Result<Status, Self::Error> {
        Err(refuse(
            StatusCode::PermissionDenied,
            "the folders are fixed",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_inside_the_tree_only() {
        assert_eq!(resolve("/"), Some(Place::Root));
        assert_eq!(resolve("."), Some(Place::Root));
        assert_eq!(resolve("../../.."), Some(Place::Root));
        assert_eq!(resolve("inbox"), Some(Place::Folder(Folder::Inbox)));
        assert_eq!(
            resolve("/outbox/../inbox/./a.xml"),
            Some(Place::File(Folder::Inbox, "a.xml".into()))
        );
        assert_eq!(resolve("/etc/passwd"), None);
        assert_eq!(resolve("/inbox/a/b"), None);
    }

    #[test]
    fn temporary_names_wait_for_their_rename() {
        for t in [".a.xml", "a.xml.tmp", "a.xml.PART", "a.filepart"] {
            assert!(temporary(t), "{t}");
        }
        for f in ["a.xml", "export.zip", "feed.ndjson"] {
            assert!(!temporary(f), "{f}");
        }
    }
}
