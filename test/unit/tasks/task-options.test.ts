import { expect } from 'chai';
import { EngineError } from '../../../pipeline/errors.js';
import { exportTaskOptions, importTaskOptions } from '../../../pipeline/tasks/task-options.js';

describe('tasks/task-options: the settings a task row keeps, read back through their schema', () => {
  it('reads the settings as the facade stores them, named as the requests name them', () => {
    const stored = {
      format: 'csv',
      fields: [{ pointer: '/email', field_name: 'email' }],
      escape_formulas: true,
      include_password_hashes: false,
      compression: 'gzip',
      filters: { created_after: '2026-01-01T00:00:00Z', disabled: false },
    };
    expect(exportTaskOptions(stored)).to.deep.equal(stored);
    expect(importTaskOptions({ identifier: 'email', upsert: true, dry_run: true })).to.deep.equal({
      identifier: 'email',
      upsert: true,
      dry_run: true,
    });
  });

  it('refuses settings off their schema with a code that ends the task at once', () => {
    const refusal = (read: () => unknown) => {
      try {
        read();
      } catch (err) {
        return err;
      }
      return undefined;
    };
    const camel = refusal(() => exportTaskOptions({ format: 'csv', fields: [], escapeFormulas: true }));
    expect(camel).to.be.an.instanceOf(EngineError).and.to.include({ code: 'TaskOptionsInvalid' });
    expect((camel as Error).message).to.include('must NOT have additional properties');
    const noUpsert = refusal(() => importTaskOptions({ identifier: 'email' }));
    expect(noUpsert).to.be.an.instanceOf(EngineError);
  });
});
