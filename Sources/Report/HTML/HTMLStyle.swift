/// The page's inline style sheet and script. No external resources: the page opens offline from a
/// file:// URL. The script avoids `<` and `&` so the document also parses as XML.
enum HTMLStyle {
    static let css = """
        :root{--bg:#f7f8fa;--fg:#1d232b;--muted:#5f6b7a;--card:#fff;--border:#dde2e8;--accent:#2563eb;--lane:#eef1f5;
        --frames:#64748b;--scan:#0ea5e9;--adv:#a855f7;--reports:#14b8a6;--bar:#cbd5e1;--bar-open:#e2e8f0;
        --disc:#7c3aed;--read:#2563eb;--write:#ea580c;--notify:#16a34a;--enc:#ca8a04;
        --error:#dc2626;--warning:#d97706;--note:#2563eb;--code:#f1f4f8;--chip-fg:#fff}
        @media (prefers-color-scheme:dark){:root{--bg:#0f1419;--fg:#dbe2ea;--muted:#8b98a8;--card:#171e26;--border:#2a3440;
        --accent:#60a5fa;--lane:#1e2731;--frames:#94a3b8;--bar:#3b4756;--bar-open:#2c3642;--disc:#a78bfa;--read:#60a5fa;
        --write:#fb923c;--notify:#4ade80;--enc:#facc15;--error:#f87171;--warning:#fbbf24;--note:#60a5fa;--code:#1f2832;--chip-fg:#111}}
        *{box-sizing:border-box}
        body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
        header.top{padding:18px 28px;border-bottom:1px solid var(--border);background:var(--card)}
        header.top h1{margin:0;font-size:20px}
        header.top p{margin:4px 0 0;color:var(--muted)}
        main{padding:8px 28px 40px;max-width:1500px;margin:0 auto}
        h2{font-size:18px;margin:28px 0 10px;word-break:break-all}
        h3{font-size:16px;margin:26px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--border)}
        h4{font-size:14px;margin:14px 0 6px}
        a{color:var(--accent);text-decoration:none}
        a:hover{text-decoration:underline}
        nav.toc{display:flex;gap:14px;flex-wrap:wrap;margin:6px 0 0;font-size:13px}
        .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px}
        .card{background:var(--card);border:1px solid var(--border);border-radius:8px;padding:10px 14px}
        .card .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
        .card .v{font-size:20px;font-weight:600;margin-top:2px;font-variant-numeric:tabular-nums}
        .card .s{color:var(--muted);font-size:12px}
        .card.wide{grid-column:span 2}
        .card.wide .v{font-size:15px;word-break:break-all}
        .banner{background:var(--card);border-left:4px solid var(--error);padding:8px 12px;margin:10px 0;border-radius:4px}
        .banner.info{border-left-color:var(--note)}
        .muted{color:var(--muted)}
        .chip{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;color:var(--chip-fg);margin-right:4px}
        .chip.error{background:var(--error)}.chip.warning{background:var(--warning)}.chip.note{background:var(--note)}
        .chip.none{background:var(--muted)}
        .panel{background:var(--card);border:1px solid var(--border);border-radius:8px;padding:12px 14px;overflow-x:auto}
        svg{display:block}
        svg text{fill:var(--fg);font-size:11px;font-family:inherit}
        svg .lbl{font-size:12px;fill:var(--muted)}
        svg .note{font-style:italic}
        svg .tlbl,svg .vlbl{font-size:10px;fill:var(--muted)}
        svg .lane{fill:var(--lane)}
        svg .axis,svg .tick{stroke:var(--muted);stroke-width:1}
        svg .grid{stroke:var(--border);stroke-width:1;stroke-dasharray:2 3}
        .r-frames path{fill:var(--frames)}.r-reports path{fill:var(--reports)}
        .r-scan path{fill:var(--scan)}.r-adv path{fill:var(--adv)}
        .r-scan path.part,.r-adv path.part{opacity:.4}
        .conn rect.bar{fill:var(--bar)}.conn rect.bar.open{fill:var(--bar-open);stroke:var(--bar);stroke-dasharray:3 2}
        .conn:hover rect.bar{stroke:var(--accent);stroke-width:1.5}
        .conn .clbl{font-size:10px;fill:var(--muted);pointer-events:none}
        .m-disc{fill:var(--disc)}.m-read{fill:var(--read)}.m-write{fill:var(--write)}.m-notify{fill:var(--notify)}
        .m-enc{fill:var(--enc);stroke:var(--card);stroke-width:1}
        .flag path{stroke:none}.flag .pole{stroke-width:1.2}.flag .ev{stroke-width:3;opacity:.35}
        .flag.sev-error path{fill:var(--error)}.flag.sev-error line{stroke:var(--error)}
        .flag.sev-warning path{fill:var(--warning)}.flag.sev-warning line{stroke:var(--warning)}
        .flag.sev-note path{fill:var(--note)}.flag.sev-note line{stroke:var(--note)}
        .flag:hover path,.flag:target path{transform-box:fill-box;transform:scale(1.5)}
        .flag:target .ev{opacity:.9}
        svg .fcount{font-size:9px;fill:var(--muted)}
        svg .cursor{stroke:var(--accent);stroke-width:1.5;visibility:hidden}
        svg .cursor-label{fill:var(--accent);font-size:11px;visibility:hidden}
        .chart{width:100%;max-width:380px}
        .chart .band{fill:var(--accent);opacity:.18}
        .chart .line{fill:none;stroke:var(--accent);stroke-width:1.6}
        .chart .dot{fill:var(--accent)}
        .chart .hbar{fill:var(--reports)}
        .legend{display:flex;gap:16px;flex-wrap:wrap;font-size:12px;color:var(--muted);margin-top:6px}
        .legend i{display:inline-block;width:12px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
        table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
        th,td{text-align:left;padding:4px 10px 4px 0;border-bottom:1px solid var(--border);vertical-align:top}
        thead th{color:var(--muted);font-weight:600;font-size:12px}
        table.kv th{color:var(--muted);font-weight:500;width:42%;white-space:nowrap}
        td.num,th.num{text-align:right}
        details.item{background:var(--card);border:1px solid var(--border);border-radius:8px;margin:10px 0}
        details.item>summary{cursor:pointer;padding:10px 14px;font-weight:600}
        details.item>summary .muted{font-weight:400}
        details.item>.body{padding:4px 14px 14px}
        details.item:target,li:target{outline:2px solid var(--accent);outline-offset:2px}
        .grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:18px}
        ul.tree{list-style:none;margin:0;padding-left:0}
        ul.tree ul.tree{padding-left:18px;border-left:1px solid var(--border);margin-left:4px}
        ul.tree li{padding:1px 0}
        ul.tree details>summary{cursor:pointer}
        .card .s .chip{margin-top:3px}
        .k{color:var(--muted)}
        code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
        .props{display:inline-flex;gap:3px;flex-wrap:wrap;vertical-align:1px}
        .props span{font-size:11px;background:var(--code);border:1px solid var(--border);border-radius:4px;padding:0 4px}
        .val{background:var(--code);border-radius:4px;padding:0 4px;word-break:break-all}
        .svc{margin:6px 0 10px}
        .svc>.name{font-weight:600}
        .chr{margin:4px 0 4px 16px}
        .dsc{margin:2px 0 2px 32px;color:var(--muted)}
        .lastval{margin:2px 0 2px 32px}
        ol.findings{padding-left:20px;margin:6px 0}
        ol.findings li{margin:6px 0}
        .frames a{margin-right:4px}
        .rulehelp{color:var(--muted);margin:0 0 6px}
        footer{color:var(--muted);font-size:12px;text-align:center;padding:20px}
        """

    /// Frame links move a cursor on the timeline; a link into a closed `details` opens it.
    static let script = """
        (function () {
          function cursor(a) {
            var cap = a.getAttribute('data-cap');
            var t = parseFloat(a.getAttribute('data-t'));
            var svg = document.getElementById(cap + '-timeline');
            if (!svg || isNaN(t)) return;
            var l = parseFloat(svg.getAttribute('data-l'));
            var p = parseFloat(svg.getAttribute('data-p'));
            var span = parseFloat(svg.getAttribute('data-span'));
            var x = l + (span > 0 ? p * Math.min(Math.max(t / span, 0), 1) : 0);
            var line = document.getElementById(cap + '-cursor');
            var label = document.getElementById(cap + '-cursor-label');
            if (!line || !label) return;
            line.setAttribute('x1', x);
            line.setAttribute('x2', x);
            line.style.visibility = 'visible';
            label.setAttribute('x', x + 4);
            label.textContent = 'frame ' + a.textContent;
            label.style.visibility = 'visible';
          }
          document.addEventListener('click', function (e) {
            var a = e.target;
            while (a) {
              if (a.classList) if (a.classList.contains('fr')) { cursor(a); return; }
              a = a.parentNode;
            }
          });
          function reveal() {
            var id = decodeURIComponent(location.hash.slice(1));
            var el = id ? document.getElementById(id) : null;
            while (el) {
              if (el.tagName === 'DETAILS') el.open = true;
              el = el.parentNode;
            }
          }
          window.addEventListener('hashchange', reveal);
          reveal();
        })();
        """
}
