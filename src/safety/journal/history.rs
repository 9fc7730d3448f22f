//! The history's query, written once for both backends with only the bounds the filter gives, so each bound's
//! index serves it (`attempts_by_payee`, `attempts_by_state`, `attempts_by_time`: newest first, no sort of the
//! whole journal): a condition written `(? IS NULL OR payee = ?)` would read every record whatever it asks.

use super::{HistoryFilter, PaymentState};
use crate::safety::journal::rules::int;

/// A parameter of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Param {
    /// A time or a count.
    Int(i64),
    /// A payee or a state.
    Text(String),
}

/// The query selecting `columns` from `table` that the filter asks for, newest first (ties: `tie`, the order rows
/// were written), each parameter written by `placeholder` (its 1-based number), and its parameters.
pub(crate) fn query(
    filter: &HistoryFilter,
    columns: &str,
    table: &str,
    tie: &str,
    placeholder: impl Fn(usize) -> String,
) -> Result<(String, Vec<Param>), String> {
    let mut params = Vec::new();
    let mut conditions = Vec::new();
    let mut bound = |condition: &str, param: Param| {
        params.push(param);
        conditions.push(format!("{condition} {}", placeholder(params.len())));
    };
    if let Some(since) = filter.since {
        bound("created_at >=", Param::Int(int(since, "the history's start")?));
    }
    if let Some(until) = filter.until {
        bound("created_at <", Param::Int(int(until, "the history's end")?));
    }
    if let Some(payee) = &filter.payee {
        bound("payee =", Param::Text(payee.clone()));
    }
    if let Some(state) = filter.state {
        bound("payment_state =", Param::Text(PaymentState::as_str(state).to_owned()));
    }
    let mut sql = format!("SELECT {columns} FROM {table}");
    if !conditions.is_empty() {
        sql = format!("{sql} WHERE {}", conditions.join(" AND "));
    }
    sql = format!("{sql} ORDER BY created_at DESC, {tie} DESC");
    if let Some(limit) = filter.limit {
        params.push(Param::Int(i64::from(limit)));
        sql = format!("{sql} LIMIT {}", placeholder(params.len()));
    }
    Ok((sql, params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_names_only_the_bounds_given_in_order() {
        let q = |f: &HistoryFilter| query(f, "*", "t", "rowid", |n| format!("?{n}")).unwrap();
        assert_eq!(q(&HistoryFilter::new()).0, "SELECT * FROM t ORDER BY created_at DESC, rowid DESC");
        let (sql, params) = q(&HistoryFilter::new().payee("0xP").limit(3));
        assert_eq!(sql, "SELECT * FROM t WHERE payee = ?1 ORDER BY created_at DESC, rowid DESC LIMIT ?2");
        assert_eq!(params, [Param::Text("0xP".into()), Param::Int(3)]);
        let (sql, params) = q(&HistoryFilter::new().since(1).until(9).state(PaymentState::Settled));
        assert_eq!(
            sql,
            "SELECT * FROM t WHERE created_at >= ?1 AND created_at < ?2 AND payment_state = ?3 \
             ORDER BY created_at DESC, rowid DESC"
        );
        assert_eq!(params, [Param::Int(1), Param::Int(9), Param::Text("settled".into())]);
        assert!(query(&HistoryFilter::new().since(u64::MAX), "*", "t", "rowid", |n| format!("?{n}")).is_err());
    }
}
