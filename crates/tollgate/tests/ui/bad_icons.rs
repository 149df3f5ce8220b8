use tollgate::tool;

#[tool(icons = "https://example.com/i.png")]
async fn pictured() -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
    Ok(tollgate::tool::CompleteResult::from_tool_text("x").into())
}

fn main() {}
