// Plain objects: the one guard used wherever parsed JSON or YAML (shapes nobody checked yet) is walked.
export type Plain = Record<string, unknown>;

/** A mapping as JSON and YAML parse it: an object that is neither null nor an array. */
export const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);
