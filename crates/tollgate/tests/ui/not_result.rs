use tollgate::tool;

#[tool]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
