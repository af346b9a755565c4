/**
 * Cost or tokens per day as stacked bars, drawn as plain SVG from `layoutChart`. A range
 * longer than the screen is wide scrolls sideways inside its box (never the page).
 */

import { colourOf, layoutChart, type Stacks } from '../../host/usage-chart';

export function UsageChart(props: { stacks: Stacks; label: (key: string) => string; value: (value: number) => string; title: string }) {
  const { stacks, label, value } = props;
  const layout = layoutChart(stacks);
  return (
    <figure class="usage-chart">
      <div class="usage-chart-scroll">
        <svg class="usage-chart-svg" width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`} role="img" aria-label={props.title}>
          {layout.ticks.map((tick) => (
            <g key={tick.value} class="usage-tick">
              <line x1={layout.left} x2={layout.width} y1={tick.y} y2={tick.y} />
              <text x={layout.left - 6} y={tick.y + 4} text-anchor="end">
                {value(tick.value)}
              </text>
            </g>
          ))}
          {layout.bars.map((bar) => (
            <g key={bar.day} class="usage-bar" data-day={bar.day} data-total={bar.total}>
              <title>{`${bar.day}: ${value(bar.total)}`}</title>
              {bar.segments.map((segment) => (
                <rect key={segment.key} x={bar.x} y={segment.y} width={bar.width} height={Math.max(segment.height, 0.5)} fill={colourOf(segment.index)} data-key={segment.key}>
                  <title>{`${bar.day} · ${label(segment.key)}: ${value(segment.value)}`}</title>
                </rect>
              ))}
              {bar.labelled ? (
                <text class="usage-day" x={bar.x + bar.width / 2} y={layout.baseline + 16} text-anchor="middle">
                  {bar.day.slice(5)}
                </text>
              ) : null}
            </g>
          ))}
          <line class="usage-baseline" x1={layout.left} x2={layout.width} y1={layout.baseline} y2={layout.baseline} />
        </svg>
      </div>
      {stacks.keys.length ? (
        <figcaption>
          <ul class="usage-legend" aria-label="Legend">
            {stacks.keys.map((key, index) => (
              <li key={key}>
                <span class="usage-swatch" style={{ background: colourOf(index) }} aria-hidden="true" />
                {label(key)}
              </li>
            ))}
          </ul>
        </figcaption>
      ) : null}
    </figure>
  );
}
