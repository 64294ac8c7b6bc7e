/**
 * What the benches that repeat their measurements share: the median and spread of the rounds, and
 * aligned Markdown tables (the first column left-aligned, the others right-aligned).
 */

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** `min–max` of the rounds, each with `format`. */
export function spread(values: readonly number[], format: (value: number) => string): string {
  return `${format(Math.min(...values))}–${format(Math.max(...values))}`
}

export const thousands = (value: number) => Math.round(value).toLocaleString('en-US')

export function printTable(headers: string[], rows: string[][]): void {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: string[]) => `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`
  console.log(line(headers))
  console.log(`|${widths.map((width, i) => (i === 0 ? '-'.repeat(width + 2) : `${'-'.repeat(width + 1)}:`)).join('|')}|`)
  for (const row of rows) console.log(line(row))
}
