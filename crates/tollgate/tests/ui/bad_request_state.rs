use tollgate::tool;

#[tool(request_state = encrypted)]
async fn keep() -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
    Ok(tollgate::tool::CompleteResult::from_tool_text("x").into())
}

fn main() {}
