// How much each stage of the export holds before it stops reading: the pipeline's flat memory.

/**
 * Arrays of records (about a hundred users each) the assembly stream (assembleRecords: the change
 * feed's records) may hold before it stops reading: few, since a record kept waiting outlives the
 * young generation. An export's records never wait between stages (encodeRecords).
 */
export const RECORD_ARRAYS_IN_FLIGHT = 2;

/**
 * Bytes of COPY text assembled and encoded at a time (a chunk read is cut into slices of this
 * size): a dozen users, whose records and cells are garbage before the young generation is next
 * collected. Records of a whole chunk (a hundred users) would still be alive then, and each
 * collection would copy them.
 */
export const ASSEMBLY_SLICE_BYTES = 8 * 1024;

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
