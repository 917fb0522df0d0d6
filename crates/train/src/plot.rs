//! A loss curve as a small standalone SVG (no plotting dependency needed for one line chart).

/// Renders `(step, loss)` points as an SVG line chart with axes and a moving average.
pub fn loss_curve_svg(points: &[(usize, f64)], title: &str) -> String {
    let (w, h, left, bottom, top, right) = (720.0, 360.0, 60.0, 40.0, 40.0, 20.0);
    let finite: Vec<(usize, f64)> = points
        .iter()
        .copied()
        .filter(|(_, l)| l.is_finite())
        .collect();
    let max_step = finite.iter().map(|p| p.0).max().unwrap_or(1).max(1) as f64;
    let max_loss = finite.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9);
    let x = |s: f64| left + s / max_step * (w - left - right);
    let y = |l: f64| top + (1.0 - l / max_loss) * (h - top - bottom);
    let path = |pts: &[(usize, f64)]| {
        pts.iter()
            .enumerate()
            .map(|(i, (s, l))| {
                format!(
                    "{}{:.1},{:.1}",
                    if i == 0 { "M" } else { " L" },
                    x(*s as f64),
                    y(*l)
                )
            })
            .collect::<String>()
    };
    let window = (finite.len() / 50).max(1);
    let smooth: Vec<(usize, f64)> = finite
        .iter()
        .enumerate()
        .map(|(i, (s, _))| {
            let lo = i.saturating_sub(window);
            let slice = &finite[lo..=i];
            (
                *s,
                slice.iter().map(|p| p.1).sum::<f64>() / slice.len() as f64,
            )
        })
        .collect();
    let mut ticks = String::new();
    for k in 0..=4 {
        let l = max_loss * k as f64 / 4.0;
        ticks.push_str(&format!(
            "<text x=\"{:.0}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{l:.2}</text>",
            left - 6.0,
            y(l) + 4.0
        ));
        let s = max_step * k as f64 / 4.0;
        ticks.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.0}\" font-size=\"11\" text-anchor=\"middle\">{s:.0}</text>",
            x(s),
            h - bottom + 16.0
        ));
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">\
<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
<text x=\"{:.0}\" y=\"24\" font-size=\"14\">{}</text>\
<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{:.0}\" stroke=\"#444\"/>\
<line x1=\"{left}\" y1=\"{:.0}\" x2=\"{:.0}\" y2=\"{:.0}\" stroke=\"#444\"/>{ticks}\
<text x=\"{:.0}\" y=\"{:.0}\" font-size=\"11\" text-anchor=\"middle\">step</text>\
<path d=\"{}\" fill=\"none\" stroke=\"#9ecae1\" stroke-width=\"1\"/>\
<path d=\"{}\" fill=\"none\" stroke=\"#08519c\" stroke-width=\"2\"/></svg>\n",
        left,
        escape(title),
        h - bottom,
        h - bottom,
        w - right,
        h - bottom,
        (left + w - right) / 2.0,
        h - 6.0,
        path(&finite),
        path(&smooth),
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    #[test]
    fn svg_has_both_curves_and_escapes_the_title() {
        let svg = super::loss_curve_svg(&[(0, 5.0), (1, 3.0), (2, f64::NAN), (3, 1.0)], "a <b>");
        assert!(svg.starts_with("<svg") && svg.contains("a &lt;b&gt;"));
        assert_eq!(svg.matches("<path").count(), 2);
    }
}
