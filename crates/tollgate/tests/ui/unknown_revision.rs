use tollgate::tool;

#[tool(revisions = [V2024_10_07])]
async fn add(a: i64) -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
    Ok(tollgate::tool::CompleteResult::from_tool_text(a.to_string()).into())
}

fn main() {}
