import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { CSV_OPTIONS, defaultMapping, textFileRecords } from '../../../records/file-records.js';

const csvRows = (text: string) => parse(text, { ...CSV_OPTIONS }) as Record<string, string>[];

describe('records/file-records: a file text as records (userctl and the console)', () => {
  it('reads CSV under a column mapping: a header renamed, a column left out, members nested', () => {
    const text = 'E-mail,Town,notes,roles\na@x.test,Paris,skip me,a;b\n';
    const records = textFileRecords(text, 'csv', csvRows, {
      'E-mail': 'email',
      Town: 'address.locality',
      notes: '',
      roles: 'roles',
    });
    expect(records).to.deep.equal([
      { position: 0, record: { email: 'a@x.test', address: { locality: 'Paris' }, roles: ['a', 'b'] } },
    ]);
  });

  it('maps each column to the member its header names by default, as userctl does', () => {
    const text = '\ufeffemail,disabled\nb@x.test,maybe\nc@x.test,1\n';
    const header = Object.keys(csvRows(text)[0] ?? {});
    expect(defaultMapping(header)).to.deep.equal({ email: 'email', disabled: 'disabled' });
    expect(textFileRecords(text, 'csv', csvRows, defaultMapping(header))).to.deep.equal([
      { position: 0, problem: 'disabled: "maybe" is not true or false' },
      { position: 1, record: { email: 'c@x.test', disabled: true } },
    ]);
  });

  it('reads ndjson lines (blank lines skipped, a bad line fails alone) and JSON arrays', () => {
    expect(textFileRecords('{"email":"a@x.test"}\n\n{oops\r\n[1]\n', 'ndjson', csvRows)).to.deep.equal([
      { position: 0, record: { email: 'a@x.test' } },
      { position: 1, problem: `not JSON: ${errorOf(() => JSON.parse('{oops'))}` },
      { position: 2, problem: 'a record must be a JSON object' },
    ]);
    expect(textFileRecords('[{"email":"a@x.test"}, 2]', 'json', csvRows)).to.deep.equal([
      { position: 0, record: { email: 'a@x.test' } },
      { position: 1, problem: 'a record must be a JSON object' },
    ]);
    expect(() => textFileRecords('{"email":"a@x.test"}', 'json', csvRows)).to.throw(/not a JSON array/);
  });
});

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return (err as Error).message;
  }
  return '';
}
