//! Upstreams left out at start-up for want of usable OAuth tokens, joined while the gateway
//! serves. Each one waits for its token file to change (a `tollgate gateway login` wrote it) or,
//! when its authorization server could not be reached, for the next attempt of a backoff; once
//! connected it is followed like an upstream of the start-up, and its catalog arrives as one
//! live change (the follower's first refresh). Owns the wait and the joining; knows nothing of
//! importing (live.rs), of OAuth (oauth.rs) or of the configuration's text.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;

use crate::config::UpstreamConfig;
use crate::error::GatewayErrorKind;
use crate::link::Link;
use crate::live::{Joining, spawn_followers};
use crate::shared::{UPSTREAM, lock};
use crate::upstream::{FIRST_REVIVE_BACKOFF, MAX_REVIVE_BACKOFF, Upstream, Watch, connect};

/// How often a left-out upstream's token file is looked at (its modification time and length,
/// one `stat`): a login is noticed within this long.
pub const LOGIN_POLL: Duration = Duration::from_secs(2);

/// The token file's stamp: its modification time and length (`None` while it is absent).
fn stamp(path: Option<&Path>) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path?).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Waits until `config`'s upstream can be connected to, then adds it to the serving gateway.
/// `unreachable` says why it was left out: its authorization server was not reached (tried
/// again with backoff, and whenever the token file changes), or no usable tokens (tried again
/// only when the token file changes).
pub(crate) async fn join_later(config: UpstreamConfig, unreachable: bool, joining: Joining) {
    let name = config.name().to_owned();
    let file = config
        .oauth()
        .and_then(|o| o.token_file())
        .map(Path::to_path_buf);
    let mut seen = stamp(file.as_deref());
    let mut backoff = unreachable.then_some(FIRST_REVIVE_BACKOFF);
    let mut waited = Duration::ZERO;
    loop {
        let step = backoff.map_or(LOGIN_POLL, |every| every.min(LOGIN_POLL));
        tokio::time::sleep(step).await;
        waited += step;
        let now = stamp(file.as_deref());
        if now == seen && backoff.is_none_or(|every| waited < every) {
            continue;
        }
        seen = now;
        waited = Duration::ZERO;
        let changed = Arc::new(Notify::new());
        match connect(&config, Watch::new(&changed)).await {
            Ok(client) => {
                let upstream = Arc::new(Upstream::new(config, Link::new(client), changed));
                lock(&joining.joined).push(Arc::clone(&upstream));
                let handles = spawn_followers(&upstream, &joining);
                lock(&joining.followers).extend(handles);
                tracing::info!(target: UPSTREAM, upstream = name.as_str(), "upstream joined");
                // The follower's first refresh imports its catalog as one live change.
                upstream.changed.notify_one();
                return;
            }
            // A login is still needed: nothing changes until the token file does.
            Err(error) if error.kind() == GatewayErrorKind::LoginNeeded => backoff = None,
            // The authorization server or the upstream itself not reached: again, later.
            Err(_) => {
                let next = backoff.map_or(FIRST_REVIVE_BACKOFF, |b| b * 2);
                backoff = Some(next.min(MAX_REVIVE_BACKOFF));
            }
        }
    }
}
