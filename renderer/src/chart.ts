import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { get } from './api';
import { h, replace } from './dom';
import type { DailyStats } from './types';
import { plural } from '../../src/domain/wording';

const DAYS = 14;

/**
 * Deliveries per day (bars) and apply time (lines, right axis) over the last two weeks, with the same
 * numbers as a table for keyboard and screen-reader users.
 */
export class DeliveriesChart {
  private plot: uPlot | null = null;
  readonly element: HTMLElement;
  private readonly plotHolder: HTMLElement;
  private readonly tableHolder: HTMLElement;
  private readonly totals: HTMLElement;

  constructor() {
    this.plotHolder = h('div', { class: 'chart', role: 'img', 'aria-label': `Chart of deliveries and apply time over the last ${DAYS} days; the same numbers are in the table below it` });
    this.totals = h('p', { class: 'muted' });
    this.tableHolder = h('div', {});
    this.element = h(
      'section',
      { id: 'chart-section', class: 'card', 'aria-labelledby': 'chart-heading' },
      h('h2', { id: 'chart-heading' }, `Deliveries and apply time, last ${DAYS} days`),
      this.plotHolder,
      this.totals,
      h('details', {}, h('summary', {}, 'Show as a table'), this.tableHolder),
    );
    // The window reflows (down to 800x600): the plot follows its holder's width.
    new ResizeObserver(() => {
      const width = this.plotWidth();
      if (this.plot && Math.abs(this.plot.width - width) > 1) this.plot.setSize({ width, height: 220 });
    }).observe(this.plotHolder);
  }

  private plotWidth(): number {
    return Math.max(280, Math.min(1200, this.plotHolder.clientWidth || 900));
  }

  async refresh(): Promise<void> {
    const stats = await get<DailyStats>('/api/stats/daily', { days: DAYS });
    const xs = stats.days.map((d) => Date.parse(`${d}T12:00:00Z`) / 1000);
    // Zero days draw no bar (null) rather than a hairline.
    const bar = (v: number): number | null => (v === 0 ? null : v);
    const data: uPlot.AlignedData = [xs, stats.delivered.map(bar), stats.rejected.map(bar), stats.applyMsMax.map((v) => v ?? null), stats.applyMsMean.map((v) => v ?? null)];
    const total = stats.delivered.reduce((a, b) => a + b, 0);
    const refused = stats.rejected.reduce((a, b) => a + b, 0);
    const slowest = Math.max(0, ...stats.applyMsMax.map((v) => v ?? 0));
    this.totals.textContent = `${plural(total, 'delivery', 'deliveries')} received, ${refused} refused; slowest apply ${slowest.toFixed(0)} ms (days in ${stats.timeZone}).`;
    replace(
      this.tableHolder,
      h(
        'table',
        { class: 'data' },
        h('thead', {}, h('tr', {}, ...['Day', 'Received', 'Refused', 'Slowest apply (ms)', 'Mean apply (ms)'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, ...stats.days.map((d, i) => h('tr', {}, h('td', {}, d), h('td', {}, stats.delivered[i] ?? 0), h('td', {}, stats.rejected[i] ?? 0), h('td', {}, stats.applyMsMax[i] ?? '—'), h('td', {}, stats.applyMsMean[i] ?? '—')))),
      ),
    );
    if (this.plot) {
      this.plot.setData(data);
      return;
    }
    const width = this.plotWidth();
    const bars = uPlot.paths.bars!({ size: [0.35, 28], align: -1 });
    const barsRight = uPlot.paths.bars!({ size: [0.35, 28], align: 1 });
    this.plot = new uPlot(
      {
        width,
        height: 220,
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] }, count: { range: (_u, _min, max) => [0, Math.max(4, max)] }, ms: { range: (_u, _min, max) => [0, Math.max(10, max * 1.1)] } },
        axes: [
          { stroke: '#333', grid: { stroke: '#e3e3e3' }, values: (_u, splits) => splits.map((s) => new Date(s * 1000).toLocaleDateString('en-GB', { day: 'numeric', month: 'short' })) },
          { scale: 'count', label: 'Deliveries', stroke: '#333', grid: { stroke: '#e3e3e3' } },
          { scale: 'ms', side: 1, label: 'Apply time (ms)', stroke: '#333', grid: { show: false } },
        ],
        series: [
          { label: 'Day', value: (_u, v) => (v === null ? '—' : new Date(v * 1000).toLocaleDateString('en-GB', { day: 'numeric', month: 'short' })) },
          { label: 'Received', scale: 'count', fill: 'rgba(31, 95, 170, 0.75)', stroke: '#1f5faa', paths: bars, points: { show: false } },
          { label: 'Refused', scale: 'count', fill: 'rgba(178, 34, 34, 0.75)', stroke: '#b22222', paths: barsRight, points: { show: false } },
          { label: 'Slowest apply (ms)', scale: 'ms', stroke: '#8a4b00', width: 2, points: { show: true, size: 5 } },
          { label: 'Mean apply (ms)', scale: 'ms', stroke: '#2e7d32', width: 2, dash: [6, 4], points: { show: true, size: 4 } },
        ],
      },
      data,
      this.plotHolder,
    );
  }
}
