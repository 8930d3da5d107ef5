import { describe, expect, it } from 'vitest';

import { saleSchema } from '../../../src/store/schemas/index.js';
import { planUpdate } from '../../../src/sync/fulfillment/guard.js';

const settings = { statuses: [0, 1, 2, 3, 6, -1, -2], finalStatuses: [6, -1, -2] };
const sale = (fields: Record<string, unknown>) => saleSchema.parse({ Id: 7, ...fields });

describe('fulfillment guard', () => {
  it('sends only when a field differs from the store, reading null texts as empty', () => {
    const current = sale({ Status: 2, StatusText: 'En proceso', TrackingCode: null });
    expect(planUpdate(current, { Status: 2, TrackingCode: '' }, settings, false)).toEqual({ action: 'unchanged' });
    expect(planUpdate(current, { Status: 3, TrackingCode: 'TN1' }, settings, false)).toEqual({ action: 'send', changed: ['Status', 'TrackingCode'] });
  });

  it('refuses a status outside fulfillment.statuses even when forced', () => {
    const plan = planUpdate(sale({ Status: 1 }), { Status: 4 }, settings, true);
    expect(plan).toMatchObject({ action: 'refuse', issue: { record: 'sale 7', field: 'Status', value: 4 } });
  });

  it('keeps a final status unless forced, while other fields of a final sale may change', () => {
    const delivered = sale({ Status: 6, StatusText: 'Entregada' });
    expect(planUpdate(delivered, { Status: 2 }, settings, false)).toMatchObject({
      action: 'refuse',
      issue: { rule: 'no move out of the final status 6 (Entregada) without force' },
    });
    expect(planUpdate(delivered, { Status: 2 }, settings, true)).toEqual({ action: 'send', changed: ['Status'] });
    expect(planUpdate(delivered, { Status: 6, Obeservations: 'firmado' }, settings, false)).toEqual({ action: 'send', changed: ['Obeservations'] });
  });
});
