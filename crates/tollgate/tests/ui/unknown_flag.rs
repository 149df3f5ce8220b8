use tollgate::tool;

#[tool(readonly)]
async fn add(a: i64) -> Result<tollgate::OperationResult, std::convert::Infallible> {
    Ok(tollgate::CompleteResult::from_tool_text(a.to_string()).into())
}

fn main() {}
