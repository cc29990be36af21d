import { Readable } from 'node:stream';
import { expect } from 'chai';
import { type FileLine, fileLines } from '../../../pipeline/import/file-lines.js';

/** Every line `fileLines` makes of `text` in the format, with the input sent in chunks of 7 bytes. */
async function linesOf(text: string, format: 'ndjson' | 'json' | 'csv', columns?: Record<string, string>) {
  const bytes = Buffer.from(text);
  const chunks = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) =>
    bytes.subarray(i * 7, i * 7 + 7),
  );
  const lines: FileLine[] = [];
  for await (const line of fileLines(
    Readable.from(chunks),
    { format, ...(columns ? { columns } : {}) },
    (err) => `unreadable: ${err.message}`,
  ))
    lines.push(line);
  return lines;
}

describe('import/file-lines', () => {
  it('reads ndjson lines by line number, blank lines skipped, a bad line left to fail alone', async () => {
    expect(await linesOf('{"a":1}\n\n{"b":\r\n{"c":3}', 'ndjson')).to.deep.equal([
      { position: 1, text: '{"a":1}' },
      { position: 3, text: '{"b":' },
      { position: 4, text: '{"c":3}' },
    ]);
  });

  it('reads a JSON array by index and ends where it stops parsing with one problem', async () => {
    expect(await linesOf('[{"a":1}, {"b":[2]}]', 'json')).to.deep.equal([
      { position: 0, text: '{"a":1}' },
      { position: 1, text: '{"b":[2]}' },
    ]);
    const broken = await linesOf(`[${'{"a":1},'.repeat(20)} {"b": nope}]`, 'json');
    expect(broken.at(-1)).to.deep.include({
      problem: 'unreadable: Parser cannot parse input: expected a value',
    });
    expect(broken.slice(0, -1).every((l) => 'text' in l)).to.equal(true);
  });

  it('maps CSV columns, fails a row of the wrong width alone, names lines', async () => {
    const csv = 'Mail,name,x\na@example.com,Ann,1\nb@example.com,Bob\nc@example.com,Cy,3\n';
    const lines = await linesOf(csv, 'csv', { Mail: 'email', x: '' });
    expect(lines).to.have.length(3);
    expect(lines[0]).to.deep.equal({ position: 2, text: '{"email":"a@example.com","name":"Ann"}' });
    expect(lines[1]).to.have.property('position', 3);
    expect((lines[1] as { problem: string }).problem).to.match(/^not a CSV row/);
    expect(lines[2]).to.deep.equal({ position: 4, text: '{"email":"c@example.com","name":"Cy"}' });
  });
});
