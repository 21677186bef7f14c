/** Nodes this deep or shallower get a dense table of their ASCII transitions. */
const DENSE_DEPTH = 3

/**
 * All forms of all values, found in one pass over the text (Aho-Corasick), linear in the text
 * whatever the number and length of the values. One line break (`\n` or `\r\n`) may sit between
 * any two characters of a form; a blank line never does. At each start the longest form wins;
 * matches do not overlap (leftmost first).
 */
export class FormMatcher {
  /** Transitions of every node but the root, keyed node * 0x10000 + character code. */
  private readonly edges = new Map<number, number>()
  /** The root's transitions by character code (0: none). */
  private readonly root = new Int32Array(0x10000)
  private readonly fail: number[] = [0]
  /** The longest form ending at this node (its own, or one of its suffixes'); 0: none. */
  private readonly out: number[] = [0]
  /**
   * For the shallow nodes, where text that is no secret spends its time: the next node on each
   * ASCII character with the failure links already followed (one array read instead of a walk).
   */
  private dense = new Int32Array(0)
  /** Where a node's row starts in `dense` (-1: a deeper node, no row). */
  private readonly row: number[] = [-1]
  readonly longest: number
  /** Positions of the characters taken into the current match (reused by every scan). */
  private readonly ring: Int32Array

  constructor(forms: Iterable<string>) {
    let longest = 0
    const children: number[][] = [[]]
    const codes: number[] = [0]
    for (const form of forms) {
      let node = 0
      for (let k = 0; k < form.length; k++) {
        const c = form.charCodeAt(k)
        let to = this.step(node, c)
        if (to === 0) {
          to = this.fail.length
          this.fail.push(0)
          this.out.push(0)
          this.row.push(-1)
          children.push([])
          codes.push(c)
          children[node].push(to)
          if (node === 0) this.root[c] = to
          else this.edges.set(node * 0x10000 + c, to)
        }
        node = to
      }
      this.out[node] = form.length
      longest = Math.max(longest, form.length)
    }
    this.longest = longest
    this.ring = new Int32Array(Math.max(1, longest))
    // Failure links breadth-first; a node's output is its own form or its longest suffix's.
    const queue: number[] = [...children[0]]
    const depth = new Map<number, number>(queue.map((n) => [n, 1]))
    const rows: Int32Array[] = []
    for (let q = 0; q < queue.length; q++) {
      const node = queue[q]
      if (this.out[node] === 0) this.out[node] = this.out[this.fail[node]]
      const d = depth.get(node) ?? 0
      if (d <= DENSE_DEPTH) {
        const table = new Int32Array(128)
        const f = this.fail[node]
        for (let c = 0; c < 128; c++) {
          const to = this.step(node, c)
          table[c] = to !== 0 ? to : f === 0 ? this.root[c] : rows[this.row[f] / 128][c]
        }
        this.row[node] = rows.length * 128
        rows.push(table)
      }
      for (const child of children[node]) depth.set(child, d + 1)
      for (const child of children[node]) {
        const c = codes[child]
        let f = this.fail[node]
        while (f !== 0 && this.step(f, c) === 0) f = this.fail[f]
        const to = this.step(f, c)
        this.fail[child] = to !== child ? to : 0
        queue.push(child)
      }
    }
    this.dense = new Int32Array(rows.length * 128)
    rows.forEach((r, i) => this.dense.set(r, i * 128))
  }

  /** The node after `node` on character `c` (0: no transition). */
  private step(node: number, c: number): number {
    return node === 0 ? this.root[c] : (this.edges.get(node * 0x10000 + c) ?? 0)
  }

  /** Spans of the text that are a form (with its line breaks), leftmost-longest, disjoint. */
  spans(text: string): { start: number; end: number }[] {
    if (this.longest === 0) return []
    const ring = this.ring
    let taken = 0
    let state = 0
    // 0: after a character; 1: after a \r; 2: after the one line break allowed.
    let gap = 0
    const found: { start: number; end: number }[] = []
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (state === 0) {
        state = this.root[c]
        if (state === 0) continue
        gap = 0
      } else if (c < 128 && c !== 10 && c !== 13 && this.row[state] >= 0) {
        state = this.dense[this.row[state] + c]
        gap = 0
        if (state === 0) continue
      } else {
        let to = this.step(state, c)
        if (to === 0) {
          if (c === 13 && gap === 0) {
            gap = 1
            continue
          }
          if (c === 10 && gap < 2) {
            gap = 2
            continue
          }
          while (state !== 0 && to === 0) {
            state = this.fail[state]
            to = this.step(state, c)
          }
        }
        gap = 0
        state = to
        if (state === 0) continue
      }
      ring[taken % this.longest] = i
      taken++
      const length = this.out[state]
      if (length > 0) found.push({ start: ring[(taken - length) % this.longest], end: i + 1 })
    }
    // Leftmost first, the longest at a start; then no overlap.
    found.sort((a, b) => a.start - b.start || b.end - a.end)
    const spans: { start: number; end: number }[] = []
    let reached = 0
    for (const f of found) {
      if (f.start < reached) continue
      spans.push(f)
      reached = f.end
    }
    return spans
  }
}
