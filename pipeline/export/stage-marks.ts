// How much each stage of the export holds before it stops reading: the pipeline's flat memory.

/**
 * Arrays of records (about a hundred users each) a stage may hold before it stops reading: enough
 * to keep every stage busy, few enough that the worker's memory stays flat (the bench's peak RSS rows).
 */
export const RECORD_ARRAYS_IN_FLIGHT = 2;

/**
 * Encoded bytes an encoder may hold before it stops encoding: set here rather than left to Node's
 * default, which grew from 16 to 64 KiB between versions and would change the read-ahead with it.
 */
export const ENCODED_BYTES_AHEAD = 64 * 1024;
