use tollgate::tool;

#[tool(text_mirror = "no")]
async fn quiet() -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
    Ok(tollgate::tool::CompleteResult::from_tool_text("x").into())
}

fn main() {}
