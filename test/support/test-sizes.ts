// How many users the volume tests generate. The default keeps `make test` quick while each test
// still does what it is for (an export outlasts its limit, a kill lands mid-file); `make test-full`
// (TEST_SIZES=full) runs the sizes a whole machine's worth of data needs.

const FULL = process.env.TEST_SIZES === 'full';

export const TEST_SIZES = {
  /** An export still running when a cancel sent at its first progress arrives. */
  cancelledExportUsers: FULL ? 600_000 : 200_000,
  /** An export that outlasts a 1 s time limit several times over, on a fast machine too. */
  timedOutExportUsers: 600_000,
  /** An export whose worker is killed mid-file: several heartbeats long. */
  killedExportUsers: FULL ? 600_000 : 200_000,
} as const;
