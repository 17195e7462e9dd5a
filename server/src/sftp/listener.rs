//! The SSH side: a listener on its own port, the host key, sign-in by public key only (the
//! account's id is the user name), and the `sftp` subsystem on session channels. Nothing
//! else is served: no shell, no exec, no forwarding.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::ssh_key::LineEnding;
use russh::keys::{HashAlg, PrivateKey};
use russh::server::{
    Auth, ChannelOpenHandle, Msg, PublicKeyOffer, Server, Session, VerifiedPublicKey,
};
use russh::{Channel, ChannelId, MethodKind, MethodSet};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use super::session::SftpSession;
use super::{accounts, SftpConfig};
use crate::state::AppState;
use crate::store::SftpAccountRecord;

#[derive(Debug, thiserror::Error)]
pub enum SftpError {
    #[error("sftp: cannot listen on {bind}: {source}")]
    Bind {
        bind: String,
        source: std::io::Error,
    },
    #[error("sftp: host key: {0}")]
    HostKey(String),
}

/// The running SFTP server.
pub struct SftpServer {
    pub addr: SocketAddr,
    /// `SHA256:...`, as clients show it on first connect.
    pub host_key_fingerprint: String,
    task: JoinHandle<()>,
}

impl SftpServer {
    /// Stop taking connections (sessions under way end with their clients).
    pub fn stop(&self) {
        self.task.abort();
    }
}

/// The host key: the configured file, else the one in the database (made on first start).
async fn host_key(state: &AppState) -> Result<PrivateKey, SftpError> {
    let pem = match &state.config.sftp.host_key_file {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| SftpError::HostKey(format!("{path}: {e}")))?
        }
        None => {
            let seed: [u8; 32] = rand::random();
            let made = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
            let candidate = made
                .to_openssh(LineEnding::LF)
                .map_err(|e| SftpError::HostKey(e.to_string()))?;
            state
                .store
                .sftp_host_key(&candidate, &crate::clock::now())
                .await
                .map_err(|e| SftpError::HostKey(e.to_string()))?
        }
    };
    PrivateKey::from_openssh(pem.as_bytes()).map_err(|e| SftpError::HostKey(e.to_string()))
}

/// Start serving SFTP when the configuration says so.
pub async fn start(state: &AppState) -> Result<Option<SftpServer>, SftpError> {
    let config = &state.config.sftp;
    if !config.on(state.config.mode) {
        return Ok(None);
    }
    let key = host_key(state).await?;
    let host_key_fingerprint = key.public_key().fingerprint(HashAlg::Sha256).to_string();
    let listener = match TcpListener::bind(&config.bind).await {
        Ok(l) => l,
        // On by default in the sandbox only: its default port in use there is no reason to
        // refuse to serve HTTP. Asked for explicitly (on, or on a port), it is.
        Err(source) if config.enabled.is_none() && config.bind == SftpConfig::default().bind => {
            tracing::warn!(bind = %config.bind, error = %source,
                "sftp is off: its port cannot be had (set INVEX_SFTP_BIND, or INVEX_SFTP_ENABLED=false)");
            return Ok(None);
        }
        Err(source) => {
            return Err(SftpError::Bind {
                bind: config.bind.clone(),
                source,
            })
        }
    };
    let addr = listener.local_addr().map_err(|source| SftpError::Bind {
        bind: config.bind.clone(),
        source,
    })?;
    let ssh = Arc::new(russh::server::Config {
        keys: vec![key],
        methods: MethodSet::from(&[MethodKind::PublicKey][..]),
        auth_rejection_time: Duration::from_millis(500),
        auth_rejection_time_initial: Some(Duration::ZERO),
        max_auth_attempts: 6,
        inactivity_timeout: Some(Duration::from_secs(config.idle_timeout_secs.max(10))),
        ..Default::default()
    });
    let mut server = Listener {
        state: state.clone(),
        sessions: Arc::new(Semaphore::new(config.max_sessions.max(1))),
    };
    let task = tokio::spawn(async move {
        if let Err(e) = server.run_on_socket(ssh, &listener).await {
            tracing::error!(error = %e, "the sftp listener stopped");
        }
    });
    tracing::info!(%addr, fingerprint = %host_key_fingerprint, "sftp listening");
    Ok(Some(SftpServer {
        addr,
        host_key_fingerprint,
        task,
    }))
}

struct Listener {
    state: AppState,
    sessions: Arc<Semaphore>,
}

impl Server for Listener {
    type Handler = Connection;

    fn new_client(&mut self, _peer: Option<SocketAddr>) -> Connection {
        Connection {
            state: self.state.clone(),
            // Over the limit the connection gets no permit and every sign-in fails.
            permit: self.sessions.clone().try_acquire_owned().ok(),
            account: None,
            channels: HashMap::new(),
        }
    }
}

/// One SSH connection.
struct Connection {
    state: AppState,
    permit: Option<OwnedSemaphorePermit>,
    account: Option<SftpAccountRecord>,
    channels: HashMap<ChannelId, Channel<Msg>>,
}

impl Connection {
    /// The active account `user` if `key` is one of its keys.
    async fn account(&self, user: &str, key: &russh::keys::PublicKey) -> Option<SftpAccountRecord> {
        self.permit.as_ref()?;
        let account = match self.state.store.sftp_account(user).await {
            Ok(a) => a?,
            Err(e) => {
                tracing::error!(error = %e, "sftp sign-in: account not read");
                return None;
            }
        };
        (account.revoked_at.is_none() && accounts::has_key(&account, key)).then_some(account)
    }
}

impl russh::server::Handler for Connection {
    type Error = russh::Error;

    async fn auth_publickey_offered(
        &mut self,
        user: &str,
        offer: PublicKeyOffer<'_>,
    ) -> Result<Auth, Self::Error> {
        Ok(match self.account(user, offer.public_key).await {
            Some(_) => Auth::Accept,
            None => Auth::reject(),
        })
    }

    async fn auth_publickey(
        &mut self,
        user: &str,
        key: VerifiedPublicKey<'_>,
    ) -> Result<Auth, Self::Error> {
        match self.account(user, key.public_key).await {
            Some(a) => {
                tracing::info!(account = %a.id, tenant = %a.tenant_id, "sftp sign-in");
                self.account = Some(a);
                Ok(Auth::Accept)
            }
            None => Ok(Auth::reject()),
        }
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.channels.insert(channel.id(), channel);
        reply.accept().await;
        Ok(())
    }

    async fn channel_eof(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.close(channel)?;
        Ok(())
    }

    async fn subsystem_request(
        &mut self,
        channel_id: ChannelId,
        name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        let (Some(account), "sftp") = (self.account.clone(), name) else {
            session.channel_failure(channel_id)?;
            return Ok(());
        };
        let Some(channel) = self.channels.remove(&channel_id) else {
            session.channel_failure(channel_id)?;
            return Ok(());
        };
        session.channel_success(channel_id)?;
        let sftp = SftpSession::new(self.state.clone(), account);
        russh_sftp::server::run(channel.into_stream(), sftp).await;
        Ok(())
    }
}
