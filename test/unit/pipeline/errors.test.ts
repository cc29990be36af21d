import { expect } from 'chai';
import {
  ApiError,
  AttemptLost,
  classifyFault,
  ENGINE_FAULTS,
  EngineError,
  serviceUnavailable,
} from '../../../pipeline/errors.js';
import { ERROR_NAMES, ERROR_REASONS, type ErrorReason } from '../../../schemas/error-reasons.js';

/** An error shaped as node-postgres reports one of the server's (its SQLSTATE and severity). */
const pgError = (code: string) => Object.assign(new Error('server said no'), { code, severity: 'ERROR' });

describe('errors: classifyFault', () => {
  it('reads Postgres errors by SQLSTATE class, never by their text', () => {
    expect(classifyFault(pgError('57P01'))).to.deep.equal({
      kind: 'transient',
      dependency: 'database',
      code: '57P01',
    });
    expect(classifyFault(pgError('08006')).kind).to.equal('transient');
    expect(classifyFault(pgError('40001')).kind).to.equal('transient');
    for (const code of ['22P05', '22021', '23505', '23514', '54000']) {
      expect(classifyFault(pgError(code))).to.deep.equal({ kind: 'data', code });
    }
    expect(classifyFault(pgError('42P01'))).to.deep.equal({ kind: 'permanent', code: '42P01' });
  });

  it('reads network, Azure and Kafka errors by their codes', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyFault(refused)).to.deep.equal({
      kind: 'transient',
      dependency: undefined,
      code: 'ECONNREFUSED',
    });
    const azure = (statusCode: number | undefined, code: string) =>
      Object.assign(new Error('azure'), { name: 'RestError', statusCode, code });
    expect(classifyFault(azure(503, 'ServerBusy'))).to.deep.include({
      kind: 'transient',
      dependency: 'blob storage',
    });
    expect(classifyFault(azure(undefined, 'ECONNREFUSED')).kind).to.equal('transient');
    expect(classifyFault(azure(400, 'InvalidBlockList')).kind).to.equal('transient');
    expect(classifyFault(azure(403, 'AuthenticationFailed'))).to.deep.equal({
      kind: 'permanent',
      code: 'AuthenticationFailed',
    });
    const kafka = (name: string, retriable: boolean) =>
      Object.assign(new Error('kafka'), { name, retriable });
    expect(classifyFault(kafka('KafkaJSProtocolError', true))).to.deep.include({
      kind: 'transient',
      dependency: 'task bus',
    });
    expect(classifyFault(kafka('KafkaJSProtocolError', false)).kind).to.equal('permanent');
  });

  it('tells errors of its own and errors with no code apart', () => {
    expect(classifyFault(new ApiError('ValidationFailed', 'no')).kind).to.equal('permanent');
    expect(classifyFault(serviceUnavailable('database'))).to.deep.include({
      kind: 'transient',
      dependency: 'database',
    });
    expect(classifyFault(new Error('Connection terminated unexpectedly'))).to.deep.equal({
      kind: 'unknown',
      code: undefined,
    });
    expect(serviceUnavailable('blob storage', undefined, 7).headers).to.deep.equal({ 'Retry-After': '7' });
    expect(serviceUnavailable('database').status).to.equal(503);
  });
});

describe('errors: the catalogue and engine faults', () => {
  it('gives every reason its name and status from the catalogue', () => {
    for (const [reason, { name }] of Object.entries(ERROR_REASONS)) {
      const err = new ApiError(reason as ErrorReason, 'm');
      expect(err.name, reason).to.equal(name);
      expect(err.status, reason).to.equal(ERROR_NAMES[name]);
    }
    expect(new ApiError('ImportBacklogFull', 'm').status).to.equal(429);
    expect(new ApiError('TaskNotFound', 'm').status).to.equal(404);
  });

  it('classifies an engine fault by its code: one that will repeat is permanent, never unknown', () => {
    expect(classifyFault(new EngineError('ExportPartsGone', 'gone'))).to.deep.equal({
      kind: 'permanent',
      code: 'ExportPartsGone',
    });
    for (const code of Object.keys(ENGINE_FAULTS) as (keyof typeof ENGINE_FAULTS)[]) {
      const fault = classifyFault(new EngineError(code, 'x'));
      expect(fault.kind, code).to.equal(ENGINE_FAULTS[code].transient ? 'transient' : 'permanent');
      expect(fault.code, code).to.equal(code);
    }
    expect(classifyFault(new AttemptLost('taken')).kind).to.equal('permanent');
    // A client's own timeout (the blob store's SDK aborting a request) is a fault that may pass.
    const aborted = Object.assign(new Error('The operation was aborted'), {
      name: 'AbortError',
      code: 'ABORT_ERR',
    });
    expect(classifyFault(aborted).kind).to.equal('transient');
  });
});
