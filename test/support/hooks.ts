// Root hooks: integration tests need a real Postgres, which `make test` starts and names here.
export const mochaHooks = {
  beforeAll(): void {
    if (!process.env.TEST_DATABASE_URL) {
      throw new Error('TEST_DATABASE_URL is not set: run the tests with `make test`, which starts Postgres');
    }
  },
};
