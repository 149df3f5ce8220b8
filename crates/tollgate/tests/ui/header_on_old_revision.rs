use tollgate::tool;

#[tool(revisions = [V2026_07_28, V2025_03_26])]
async fn lookup(
    #[header("Region")] region: String,
) -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
    Ok(tollgate::tool::CompleteResult::from_tool_text(region).into())
}

fn main() {}
