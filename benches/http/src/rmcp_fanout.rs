//! rmcp's fan-out (3.11), beside `fanout-server`: the same `bench://feed` resource and `touch`
//! tool, written as an rmcp application would: every 2026-07-28 `subscriptions/listen`
//! (`accepted_subscription_filter` and `listen`) follows a tokio broadcast channel, and the peer
//! of every 2025 session that sent `resources/subscribe` is kept and told in turn. Served by its
//! Streamable HTTP tower service with 2025 sessions (`legacy_session_mode`, SSE answers) on the
//! same hyper HTTP/1.1 connection loop as the other rmcp server.

#[allow(dead_code, reason = "the filler catalog is the other servers'")]
mod common;

use std::sync::{Arc, Mutex, PoisonError};

use hyper_util::service::TowerToHyperService;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    ErrorData, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};
use tokio::sync::broadcast;

const FEED: &str = "bench://feed";

#[derive(Clone)]
struct Feed {
    updates: broadcast::Sender<()>,
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    tool_router: Arc<ToolRouter<Feed>>,
}

#[tool_router]
impl Feed {
    fn new() -> Self {
        Self {
            updates: broadcast::channel(1024).0,
            peers: Arc::default(),
            tool_router: Arc::new(Self::tool_router()),
        }
    }

    #[tool(description = "Announces an update of bench://feed")]
    async fn touch(&self) -> String {
        let _ = self.updates.send(());
        let peers = self
            .peers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        tokio::spawn(async move {
            for peer in peers {
                let _ = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(FEED))
                    .await;
            }
        });
        "touched".to_owned()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Feed {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resource = Resource::new(FEED, "feed");
        Ok(ListResourcesResult::with_all_items(vec![resource]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Ok(ReadResourceResult::new(vec![ResourceContents::text("feed", request.uri)]).into())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut updates = self.updates.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                update = updates.recv() => {
                    if matches!(update, Err(broadcast::error::RecvError::Closed))
                        || context.sink().notify_resource_updated(FEED).await.is_err()
                    {
                        return Ok(());
                    }
                }
            }
        }
    }

    #[allow(
        deprecated,
        reason = "2025 sessions subscribe with resources/subscribe"
    )]
    async fn subscribe(
        &self,
        _: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.peers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(context.peer.clone());
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = true;
    config.json_response = false;
    let feed = Feed::new();
    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || Ok(feed.clone()),
        LocalSessionManager::default().into(),
        config,
    ));
    common::runtime()?.block_on(common::serve(service))?;
    Ok(())
}
