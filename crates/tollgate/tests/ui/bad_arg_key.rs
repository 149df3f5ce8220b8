use tollgate::tool;

#[tool]
async fn add(#[arg(label = "A")] a: i64) -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
    Ok(tollgate::tool::CompleteResult::from_tool_text(a.to_string()).into())
}

fn main() {}
