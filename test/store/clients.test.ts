import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ValidationError } from '../../src/errors.js';
import { StoreConflictError, StoreNotFoundError } from '../../src/store/errors.js';
import { type StoreFixture, storeFixture } from './setup.js';

let fixture: StoreFixture;

beforeAll(async () => {
  fixture = await storeFixture({ clients: 5 });
});

afterAll(async () => {
  await fixture.close();
});

describe('clients', () => {
  it('lists all clients, keeping every field as received', async () => {
    const clients = await fixture.client.clients.list();
    expect(clients).toHaveLength(5);
    expect(clients[0]).toHaveProperty('Email');
  });

  it('gets a client through both documented paths', async () => {
    const [first] = await fixture.client.clients.list();
    const id = first!.Id as number;
    fixture.sim.resetCounters();
    expect(await fixture.client.clients.get(id)).toEqual(first);
    expect(await fixture.client.clients.get(id, { form: 'get' })).toEqual(first);
    expect(fixture.sim.counters().requests).toMatchObject({ 'GET /Api/Client/{id}': 1, 'GET /Api/Client/Get/{id}': 1 });
  });

  it('creates, updates and deletes a client', async () => {
    const created = (await fixture.client.clients.create({ Name: 'Ferretería Núñez', Email: 'nunez@example.com' })) as { Id: number };
    expect(created.Id).toBeGreaterThan(0);
    await fixture.client.clients.update(created.Id, { Phone: '011-4444-5555' });
    expect(await fixture.client.clients.get(created.Id)).toMatchObject({ Name: 'Ferretería Núñez', Phone: '011-4444-5555' });
    await fixture.client.clients.delete(created.Id);
    await expect(fixture.client.clients.get(created.Id)).rejects.toBeInstanceOf(StoreNotFoundError);
  });

  it('maps a duplicate e-mail to StoreConflictError', async () => {
    const [first] = await fixture.client.clients.list();
    await expect(fixture.client.clients.create({ Name: 'Otro', Email: first!.Email })).rejects.toBeInstanceOf(StoreConflictError);
  });

  it('refuses a body that is not an object and an id that is not positive, before sending', async () => {
    fixture.sim.resetCounters();
    await expect(fixture.client.clients.create([] as unknown as Record<string, unknown>)).rejects.toBeInstanceOf(ValidationError);
    await expect(fixture.client.clients.delete(-1)).rejects.toBeInstanceOf(ValidationError);
    expect(fixture.sim.counters().total).toBe(0);
  });
});
