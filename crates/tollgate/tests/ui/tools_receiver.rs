struct Counter;

#[tollgate::tools]
impl Counter {
    #[tool]
    async fn bump(n: i64) -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
        Ok(tollgate::tool::CompleteResult::from_tool_text(n.to_string()).into())
    }
}

fn main() {}
