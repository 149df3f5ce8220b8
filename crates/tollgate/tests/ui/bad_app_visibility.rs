use tollgate::tool;

#[tool(app_view = "ui://shop/products", app_visibility = everyone)]
async fn show() -> Result<tollgate::tool::OperationResult, std::convert::Infallible> {
    Ok(tollgate::tool::CompleteResult::from_tool_text("x").into())
}

fn main() {}
