//! The row count the SQL task stores' capacity check reads: one row of `tollgate_task_count`,
//! kept by triggers in the same statement as every insert, delete and (PostgreSQL) `TRUNCATE`
//! of `tollgate_tasks`, so checking a full table is one read instead of a count of every row.
//!
//! Owns the count's table, its triggers and when it is counted afresh: whenever the triggers or
//! the row are missing (a new database, a table an earlier Tollgate made, a table dropped and
//! made again), under the schema transaction, after the triggers are in place, so no insert
//! falls between. Knows nothing of rows' contents or of task semantics.

/// One row holding how many rows `tollgate_tasks` has.
pub(crate) const CREATE_COUNT: &str = "CREATE TABLE IF NOT EXISTS tollgate_task_count (\
     one INTEGER PRIMARY KEY NOT NULL CHECK (one = 1), \
     n BIGINT NOT NULL)";

/// PostgreSQL: statement-level triggers with transition tables, so a purge of many rows is one
/// update of the count (row-level ones would update it once per row, each update stepping over
/// the row versions the earlier ones left in the same transaction). The functions keep the
/// `search_path` they were made under. Created, and the table counted, only when a trigger or
/// the row is missing: creating a trigger locks inserts out until the transaction ends, so the
/// count misses none, and a start that finds everything in place takes no such lock.
#[cfg(feature = "postgres")]
pub(crate) const POSTGRES_COUNT: &str = "DO $$ BEGIN \
     IF (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'tollgate_tasks'::regclass \
         AND tgname IN ('tollgate_tasks_counted_in', 'tollgate_tasks_counted_out', \
                        'tollgate_tasks_counted_zero')) < 3 \
        OR NOT EXISTS (SELECT 1 FROM tollgate_task_count WHERE one = 1) THEN \
       CREATE OR REPLACE FUNCTION tollgate_tasks_count_in() RETURNS trigger \
         LANGUAGE plpgsql SET search_path FROM CURRENT AS $f$ BEGIN \
         UPDATE tollgate_task_count SET n = n + (SELECT count(*) FROM added) WHERE one = 1; \
         RETURN NULL; END $f$; \
       CREATE OR REPLACE FUNCTION tollgate_tasks_count_out() RETURNS trigger \
         LANGUAGE plpgsql SET search_path FROM CURRENT AS $f$ BEGIN \
         UPDATE tollgate_task_count SET n = n - (SELECT count(*) FROM removed) WHERE one = 1; \
         RETURN NULL; END $f$; \
       CREATE OR REPLACE FUNCTION tollgate_tasks_count_zero() RETURNS trigger \
         LANGUAGE plpgsql SET search_path FROM CURRENT AS $f$ BEGIN \
         UPDATE tollgate_task_count SET n = 0 WHERE one = 1; \
         RETURN NULL; END $f$; \
       DROP TRIGGER IF EXISTS tollgate_tasks_counted_in ON tollgate_tasks; \
       DROP TRIGGER IF EXISTS tollgate_tasks_counted_out ON tollgate_tasks; \
       DROP TRIGGER IF EXISTS tollgate_tasks_counted_zero ON tollgate_tasks; \
       CREATE TRIGGER tollgate_tasks_counted_in AFTER INSERT ON tollgate_tasks \
         REFERENCING NEW TABLE AS added FOR EACH STATEMENT \
         EXECUTE FUNCTION tollgate_tasks_count_in(); \
       CREATE TRIGGER tollgate_tasks_counted_out AFTER DELETE ON tollgate_tasks \
         REFERENCING OLD TABLE AS removed FOR EACH STATEMENT \
         EXECUTE FUNCTION tollgate_tasks_count_out(); \
       CREATE TRIGGER tollgate_tasks_counted_zero AFTER TRUNCATE ON tollgate_tasks \
         FOR EACH STATEMENT EXECUTE FUNCTION tollgate_tasks_count_zero(); \
       INSERT INTO tollgate_task_count (one, n) SELECT 1, count(*) FROM tollgate_tasks \
         ON CONFLICT (one) DO UPDATE SET n = EXCLUDED.n; \
     END IF; END $$";

#[cfg(feature = "sqlite")]
const SQLITE_COUNT_IN: &str = "CREATE TRIGGER IF NOT EXISTS tollgate_tasks_counted_in \
     AFTER INSERT ON tollgate_tasks \
     BEGIN UPDATE tollgate_task_count SET n = n + 1 WHERE one = 1; END";
#[cfg(feature = "sqlite")]
const SQLITE_COUNT_OUT: &str = "CREATE TRIGGER IF NOT EXISTS tollgate_tasks_counted_out \
     AFTER DELETE ON tollgate_tasks \
     BEGIN UPDATE tollgate_task_count SET n = n - 1 WHERE one = 1; END";
#[cfg(feature = "sqlite")]
const SQLITE_IN_PLACE: &str = "SELECT \
     (SELECT count(*) FROM sqlite_master WHERE type = 'trigger' \
        AND name IN ('tollgate_tasks_counted_in', 'tollgate_tasks_counted_out')) = 2 \
     AND EXISTS (SELECT 1 FROM tollgate_task_count WHERE one = 1)";
#[cfg(feature = "sqlite")]
const SQLITE_RECOUNT: &str =
    "INSERT OR REPLACE INTO tollgate_task_count (one, n) SELECT 1, count(*) FROM tollgate_tasks";

/// SQLite, inside the caller's write transaction: row triggers (SQLite updates the count row in
/// place, and a `DELETE` of every row still fires them once triggers exist), made and counted
/// afresh only when missing.
#[cfg(feature = "sqlite")]
pub(crate) async fn sqlite(tx: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    sqlx::query(CREATE_COUNT).execute(&mut *tx).await?;
    let (in_place,): (bool,) = sqlx::query_as(SQLITE_IN_PLACE).fetch_one(&mut *tx).await?;
    if !in_place {
        for statement in [SQLITE_COUNT_IN, SQLITE_COUNT_OUT, SQLITE_RECOUNT] {
            sqlx::query(statement).execute(&mut *tx).await?;
        }
    }
    Ok(())
}
