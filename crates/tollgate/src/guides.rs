//! The README's and the guides' examples, compiled and run as doc tests (built only for
//! `cargo test --doc`). Knows nothing: it only includes the Markdown files.

/// The README's examples.
#[doc = include_str!("../../../README.md")]
pub struct Readme;

/// The typed tools guide's examples.
#[doc = include_str!("../../../docs/typed-tools.md")]
pub struct TypedToolsGuide;

/// The tools guide's examples.
#[doc = include_str!("../../../docs/guide/tools.md")]
pub struct ToolsGuide;

/// The tasks guide's examples.
#[doc = include_str!("../../../docs/guide/tasks.md")]
pub struct TasksGuide;

/// The skills guide's examples.
#[doc = include_str!("../../../docs/guide/skills.md")]
pub struct SkillsGuide;

/// The MCP Apps guide's examples.
#[doc = include_str!("../../../docs/guide/apps.md")]
pub struct AppsGuide;

/// The interception guide's examples.
#[doc = include_str!("../../../docs/guide/interception.md")]
pub struct InterceptionGuide;

/// The prompts guide's examples.
#[doc = include_str!("../../../docs/guide/prompts.md")]
pub struct PromptsGuide;

/// The resources guide's examples.
#[doc = include_str!("../../../docs/guide/resources.md")]
pub struct ResourcesGuide;

/// The content guide's examples.
#[doc = include_str!("../../../docs/guide/content.md")]
pub struct ContentGuide;

/// The policy guide's examples.
#[doc = include_str!("../../../docs/guide/policy.md")]
pub struct PolicyGuide;

/// The input and request state guide's examples.
#[doc = include_str!("../../../docs/guide/input-and-state.md")]
pub struct InputAndStateGuide;

/// The revisions guide's examples.
#[doc = include_str!("../../../docs/guide/revisions.md")]
pub struct RevisionsGuide;

/// The observability guide's examples.
#[doc = include_str!("../../../docs/guide/observability.md")]
pub struct ObservabilityGuide;

/// The deployment guide's examples.
#[doc = include_str!("../../../docs/guide/deployment.md")]
pub struct DeploymentGuide;

/// The authorization guide's examples (they need `oauth`).
#[cfg(feature = "oauth")]
#[doc = include_str!("../../../docs/guide/authorization.md")]
pub struct AuthorizationGuide;
