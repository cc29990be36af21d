// How much each stage of the export holds before it stops reading: the pipeline's flat memory.

/**
 * Arrays of records (about a hundred users each) the assembly stream (assembleRecords: the change
 * feed's records) may hold before it stops reading: few, since a record kept waiting outlives the
 * young generation. An export's records never wait between stages (encodeRecords).
 */
export const RECORD_ARRAYS_IN_FLIGHT = 2;

/**
 * Records a CSV export assembles and encodes at a time. A record's cells go through csv-stringify
 * one by one, which leaves hundreds of bytes of garbage for each: the young generation fills in
 * a few hundred users, and the records of a whole chunk read (about a hundred) would still be alive
 * at many of its collections, which would copy them each time. An ndjson record leaves far less,
 * and is encoded with the rest of its chunk.
 */
export const CSV_RECORDS_AT_ONCE = 16;

/**
 * Encoded bytes an encoder may hold before it stops encoding: set here rather than left to Node's
 * default, which grew from 16 to 64 KiB between versions and would change the read-ahead with it.
 */
export const ENCODED_BYTES_AHEAD = 64 * 1024;

/**
 * Bytes of the records statement's COPY text the worker reads ahead of its assembly. Postgres
 * writes into a socket buffer of the database host's size (a few hundred KiB by default), and
 * stops when it is full: without a read-ahead of its own, each pause of the worker (a batch of
 * CSV cells, a collection) would stop the backend too.
 */
export const COPY_BYTES_AHEAD = 4 * 1024 * 1024;
