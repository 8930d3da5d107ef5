import { describe, expect, it } from 'vitest';

import { ackPayload, renderTemplate } from '../../../src/sync/sales/ack.js';

describe('sale acknowledgement', () => {
  it('fills the observation template and leaves unknown placeholders as written', () => {
    expect(renderTemplate('ERP {erpRef} for {saleId}@{siteId} {other}', { erpRef: 'SO-1', saleId: 5, siteId: 2 })).toBe('ERP SO-1 for 5@2 {other}');
  });

  it('builds the sale update with the configured status, text and observation', () => {
    const ack = { enabled: true, status: 2, statusText: 'In process', observations: 'ERP order {erpRef}' };
    expect(ackPayload(ack, 5, 1, '1-5')).toEqual({ Id: 5, Status: 2, StatusText: 'In process', Obeservations: 'ERP order 1-5' });
  });
});
