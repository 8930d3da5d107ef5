import { describe, expect, it } from 'vitest';

import { ackChange, appendOnce, renderTemplate } from '../../../src/sync/sales/ack.js';

const ack = { enabled: true, status: 2, observations: 'ERP order {erpRef}' };
const context = { saleId: 5, siteId: 1, erpRef: '1-5', pulledStatuses: [1] };

describe('sale acknowledgement', () => {
  it('fills the observation template and leaves unknown placeholders as written', () => {
    expect(renderTemplate('ERP {erpRef} for {saleId}@{siteId} {other}', { erpRef: 'SO-1', saleId: 5, siteId: 2 })).toBe('ERP SO-1 for 5@2 {other}');
  });

  it('sets the ack status (its text left to store.statusTexts) and writes the note on empty observations', () => {
    expect(ackChange(ack, { Id: 5, Status: 1, Obeservations: '' }, context)).toEqual({ Status: 2, Obeservations: 'ERP order 1-5' });
    expect(ackChange({ ...ack, statusText: 'Tomada' }, { Id: 5, Status: 1, Obeservations: null }, context)).toEqual({
      Status: 2,
      StatusText: 'Tomada',
      Obeservations: 'ERP order 1-5',
    });
  });

  it("appends the note after the customer's note instead of overwriting it", () => {
    expect(ackChange(ack, { Id: 5, Status: 1, Obeservations: 'Ring twice, please' }, context).Obeservations).toBe('Ring twice, please\nERP order 1-5');
  });

  it('appends the note once: a retried acknowledgement finds it and changes nothing', () => {
    const after = { Id: 5, Status: 2, Obeservations: 'Ring twice, please\nERP order 1-5' };
    expect(ackChange(ack, after, context)).toEqual({});
  });

  it('matches the note line by line, not as a substring of another reference', () => {
    expect(appendOnce('ERP order 1-55', 'ERP order 1-5')).toBe('ERP order 1-55\nERP order 1-5');
    expect(appendOnce('a\r\n  ERP order 1-5  ', 'ERP order 1-5')).toBeUndefined();
  });

  it('keeps a status the sale moved on to and writes only the note', () => {
    expect(ackChange(ack, { Id: 5, Status: 3, Obeservations: '' }, context)).toEqual({ Obeservations: 'ERP order 1-5' });
  });
});
