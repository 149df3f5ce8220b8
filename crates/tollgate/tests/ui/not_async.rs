use tollgate::tool;

#[tool]
fn add(a: i64) -> Result<i64, std::convert::Infallible> {
    Ok(a)
}

fn main() {}
