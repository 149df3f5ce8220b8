use tollgate::tool;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Out {
    n: u32,
}

#[tool(may_ask = [elicitation])]
async fn typed() -> Result<Out, std::convert::Infallible> {
    Ok(Out { n: 1 })
}

fn main() {}
