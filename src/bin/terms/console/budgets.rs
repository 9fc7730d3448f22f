//! The budgets page: each budget of the policy (each payee or origin of one kept `per` them) with what its window
//! holds now, spent, reserved and remaining, in the asset's units, and a chart of its spend over the window drawn
//! on the server as SVG (no script).

use std::fmt::Write as _;

use terms::U256;
use terms::safety::journal::{HistoryFilter, ReservationState};

use super::Cx;
use super::html::{esc, page};

/// How many payments of a window the chart reads at most.
const CHART_RECORDS: u32 = 10_000;

/// One reservation on the chart: when, how much, and whether it is spent (else only reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Point {
    pub(crate) at: u64,
    pub(crate) amount: U256,
    pub(crate) spent: bool,
}

/// One budget (one scope of it) as the page shows it.
struct Shown {
    name: String,
    scope: String,
    asset: String,
    window: u64,
    limit: U256,
    spent: U256,
    reserved: U256,
    remaining: U256,
    points: Vec<Point>,
}

/// Every budget of the policy, read now.
pub(crate) async fn budgets(cx: &Cx) -> Result<String, String> {
    let Some(policy) = &cx.policy else {
        let body = "<p class=\"note\">No spend policy: set one in the configuration or with --policy.</p>";
        return Ok(page("Budgets", "/budgets", true, body));
    };
    let now = cx.clock.now();
    let mut shown = Vec::new();
    for b in &policy.rules().budgets {
        let window = b.window.seconds();
        let limit = b.limit.parse::<U256>().unwrap_or(U256::ZERO);
        // The window `(now - window, now]`; a reservation's time is its attempt's (the intent's).
        let since = now.saturating_sub(window).saturating_add(1);
        let records = cx
            .journal
            .history(&HistoryFilter::new().since(since).limit(CHART_RECORDS))
            .await
            .map_err(|e| e.to_string())?;
        let mut held: Vec<(String, Point)> = records
            .iter()
            .flat_map(|r| r.reservations.iter())
            .filter(|v| v.budget == b.name && v.asset == b.asset && v.at >= since)
            .filter(|v| v.state != ReservationState::Released)
            .map(|v| {
                (v.scope.clone(), Point { at: v.at, amount: v.amount, spent: v.state == ReservationState::Committed })
            })
            .collect();
        held.sort_by_key(|(_, p)| p.at);
        let mut scopes: Vec<String> =
            if b.per.is_some() { held.iter().map(|(s, _)| s.clone()).collect() } else { vec![] };
        scopes.sort();
        scopes.dedup();
        if b.per.is_none() {
            scopes.push(String::new());
        }
        for scope in scopes {
            let used =
                cx.journal.budget(&b.name, &scope, &b.asset, window, limit, now).await.map_err(|e| e.to_string())?;
            let points = held.iter().filter(|(s, _)| b.per.is_none() || *s == scope).map(|(_, p)| *p).collect();
            shown.push(Shown {
                name: b.name.clone(),
                scope,
                asset: b.asset.clone(),
                window,
                limit,
                spent: used.spent,
                reserved: used.reserved,
                remaining: used.remaining,
                points,
            });
        }
    }
    let mut body = String::new();
    if shown.is_empty() {
        body.push_str("<p class=\"note\">The policy keeps no budget (or none has a payment in its window yet).</p>");
    }
    for s in &shown {
        // A budget's asset is `<network>/<asset>`; the network may hold a `/` of its own only before the last.
        let (network, asset) = s.asset.rsplit_once('/').unwrap_or(("", s.asset.as_str()));
        let show = |n: U256| cx.assets.show(network, asset, n);
        let scope = if s.scope.is_empty() { String::new() } else { format!(" for <code>{}</code>", esc(&s.scope)) };
        let _ = write!(
            body,
            "<section class=\"card budget\" data-budget=\"{name}\">\n<h2>{name}{scope}</h2>\n<dl><dt>limit</dt><dd>{limit} \
             per {window}</dd><dt>spent</dt><dd class=\"spent\">{spent}</dd><dt>reserved</dt><dd class=\"reserved\">\
             {reserved}</dd><dt>remaining</dt><dd class=\"remaining\">{remaining}</dd></dl>\n{chart}</section>\n",
            name = esc(&s.name),
            limit = esc(&show(s.limit)),
            window = esc(&human_window(s.window)),
            spent = esc(&show(s.spent)),
            reserved = esc(&show(s.reserved)),
            remaining = esc(&show(s.remaining)),
            chart = chart(&s.points, now.saturating_sub(s.window), now, s.limit, &show),
        );
    }
    Ok(page("Budgets", "/budgets", true, &body))
}

/// `3600` → `1 h`, `86400` → `24 h`, else seconds.
fn human_window(seconds: u64) -> String {
    if seconds.is_multiple_of(3600) { format!("{} h", seconds / 3600) } else { format!("{seconds} s") }
}

/// An amount as a number for drawing (an amount past f64's range is drawn at its top).
fn float(n: U256) -> f64 {
    n.to_string().parse::<f64>().unwrap_or(f64::MAX)
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 200.0;
const LEFT: f64 = 12.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = 24.0;

/// The chart of a window `(start, end]`: the spend (settled) and spend with the reservations, summed up in time
/// as steps, and the limit as a line. Server-side SVG, text escaped.
pub(crate) fn chart(points: &[Point], start: u64, end: u64, limit: U256, show: &dyn Fn(U256) -> String) -> String {
    let span = end.saturating_sub(start).max(1) as f64;
    let mut spent = U256::ZERO;
    let mut held = U256::ZERO;
    let mut steps_spent = vec![(start, U256::ZERO)];
    let mut steps_held = vec![(start, U256::ZERO)];
    for p in points.iter().filter(|p| p.at > start) {
        let at = p.at.min(end);
        held = held.saturating_add(p.amount);
        steps_held.push((at, held));
        if p.spent {
            spent = spent.saturating_add(p.amount);
            steps_spent.push((at, spent));
        }
    }
    steps_spent.push((end, spent));
    steps_held.push((end, held));
    let top = float(limit).max(float(held)).max(1.0) * 1.08;
    let x = |at: u64| LEFT + (at.saturating_sub(start) as f64 / span) * (WIDTH - 2.0 * LEFT);
    let y = |n: U256| TOP + (1.0 - float(n) / top) * (HEIGHT - TOP - BOTTOM);
    let line = |steps: &[(u64, U256)]| {
        let mut d = String::new();
        let mut last: Option<f64> = None;
        for (at, n) in steps {
            let (px, py) = (x(*at), y(*n));
            match last {
                None => {
                    let _ = write!(d, "M{px:.1},{py:.1}");
                }
                Some(prev) => {
                    let _ = write!(d, " L{px:.1},{prev:.1} L{px:.1},{py:.1}");
                }
            }
            last = Some(py);
        }
        d
    };
    let base = HEIGHT - BOTTOM;
    let limit_y = y(limit);
    let label = format!("spent {} of {} in the window", show(spent), show(limit));
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 \
         {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{label}\"><title>{label}</title>\
         <line x1=\"{LEFT}\" y1=\"{base}\" x2=\"{right}\" y2=\"{base}\" stroke=\"#8893a8\"/>\
         <line x1=\"{LEFT}\" y1=\"{limit_y:.1}\" x2=\"{right}\" y2=\"{limit_y:.1}\" stroke=\"#a3231a\" \
         stroke-dasharray=\"6 4\"/><text x=\"{LEFT}\" y=\"{limit_text:.1}\" font-size=\"11\" fill=\"#a3231a\">limit \
         {limit_label}</text>\
         <path d=\"{held_path}\" fill=\"none\" stroke=\"#d9a400\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/>\
         <path d=\"{spent_path}\" fill=\"none\" stroke=\"#1f7a3d\" stroke-width=\"2.5\"/>\
         <text x=\"{LEFT}\" y=\"{under:.1}\" font-size=\"11\" fill=\"#5b6475\">{from}</text>\
         <text x=\"{right}\" y=\"{under:.1}\" font-size=\"11\" fill=\"#5b6475\" text-anchor=\"end\">{to} (now)</text>\
         <text x=\"{right}\" y=\"14\" font-size=\"11\" fill=\"#1f7a3d\" text-anchor=\"end\">spent {spent_label} \
         <tspan fill=\"#b08600\">· with reserved {held_label}</tspan></text></svg>",
        label = esc(&label),
        right = WIDTH - LEFT,
        limit_text = (limit_y - 4.0).max(10.0),
        limit_label = esc(&show(limit)),
        held_path = line(&steps_held),
        spent_path = line(&steps_spent),
        under = HEIGHT - 6.0,
        from = crate::units::rfc3339(start),
        to = crate::units::rfc3339(end),
        spent_label = esc(&show(spent)),
        held_label = esc(&show(held)),
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_steps_up_at_each_payment_and_draws_the_limit() {
        let p = |at, n: u32, spent| Point { at, amount: U256::from(n), spent };
        let show = |n: U256| format!("<{n}>");
        let svg = chart(&[p(10, 25, true), p(50, 25, false), p(0, 99, true)], 0, 100, U256::from(100u32), &show);
        // Spent: 0 until 10, then 25 to the end; with the reservation, 50 from 50 on. The payment at the window's
        // start (not inside `(start, end]`) is not drawn.
        assert!(svg.contains("spent &lt;25&gt; of &lt;100&gt; in the window"), "{svg}");
        assert!(svg.contains("with reserved &lt;50&gt;"), "{svg}");
        let spent_path = svg.split("<path d=\"").nth(2).unwrap_or_default();
        assert!(spent_path.starts_with("M12.0,176.0 L73.6,176.0 L73.6,"), "{spent_path}");
        assert_eq!(human_window(86_400), "24 h");
    }
}
