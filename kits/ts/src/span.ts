// The span type the reply guard's scans return.

/** A half-open range of code units in a scan string. */
export interface Span {
  start: number;
  end: number;
}
