use tollgate::tool;

#[tool(may_ask = [roots(always)])]
async fn ask() -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
    Ok(tollgate::tool::CompleteResult::from_tool_text("x").into())
}

fn main() {}
