import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Client, type Simulator, startSimulator, type User } from '../../src/simulator/index.js';
import { session } from './http.js';

type Session = Awaited<ReturnType<typeof session>>;

const NEW_USER = { Username: 'ana@example.com', Password: 's3creto', FirstName: 'Ana', LastName: 'Muñoz', EMail: 'ana@example.com' };

describe('simulator users and clients', () => {
  let sim: Simulator;
  let s: Session;
  let first: User;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: 0, sales: 0, users: 5, clients: 3 });
    s = await session(sim.url);
    first = (await s.call<User>('GET', '/Api/User/1')).body;
  });
  afterAll(() => sim.close());

  it('returns a user by id on both path forms, never with a password, and 404 for an unknown id', async () => {
    expect(first).toMatchObject({ Id: 1 });
    expect(first).not.toHaveProperty('Password');
    expect((await s.call<User>('GET', '/user/1')).body).toEqual(first);
    expect((await s.call('GET', '/Api/User/999')).status).toBe(404);
  });

  it('returns every user for an empty term with fields None, and searches a field otherwise', async () => {
    expect((await s.call<User[]>('GET', '/Api/User', { query: { term: '', fields: 'None' } })).body).toHaveLength(5);
    const byLast = await s.call<User[]>('GET', '/Api/User', { query: { term: first.LastName.slice(0, 3), fields: 'LastName' } });
    expect(byLast.body.map((u) => u.Id)).toContain(1);
    const byPriceList = await s.call<User[]>('GET', '/Api/User', { query: { term: String(first.PriceListId), fields: 'PriceList' } });
    expect(byPriceList.body.every((u) => u.PriceListId === first.PriceListId)).toBe(true);
    expect((await s.call('GET', '/Api/User', { query: { term: 'x', fields: 'Shoe' } })).status).toBe(400);
  });

  it('creates a user with the required fields and refuses a missing one with 400', async () => {
    const created = await s.call<User>('POST', '/Api/User', { body: NEW_USER });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ Id: 6, Username: 'ana@example.com', LastName: 'Muñoz' });
    expect(created.body).not.toHaveProperty('Password');
    const { Password: _omitted, ...withoutPassword } = { ...NEW_USER, Username: 'b@example.com', EMail: 'b@example.com' };
    expect((await s.call('POST', '/Api/User', { body: withoutPassword })).status).toBe(400);
    expect((await s.call('POST', '/Api/User', { body: { ...NEW_USER, Username: 'c@example.com', EMail: 'c@example.com', Access: 'yes' } })).status).toBe(400);
  });

  it('refuses a duplicate username or e-mail with 409', async () => {
    expect((await s.call('POST', '/Api/User', { body: { ...NEW_USER, EMail: 'other@example.com' } })).status).toBe(409);
    expect((await s.call('POST', '/Api/User', { body: { ...NEW_USER, Username: 'other', EMail: first.EMail.toUpperCase() } })).status).toBe(409);
  });

  it('updates only the fields sent, and answers 404, 400 and 409 to an unknown id, a wrong Id and a taken e-mail', async () => {
    const res = await s.call<User>('PUT', '/Api/User/2', { body: { Id: 2, Phone: '+54 11 5555-0000' } });
    expect(res.status).toBe(200);
    expect(res.body.Phone).toBe('+54 11 5555-0000');
    expect((await s.call<User>('GET', '/user/2')).body.Phone).toBe('+54 11 5555-0000');
    expect((await s.call('PUT', '/Api/User/999', { body: { Phone: '1' } })).status).toBe(404);
    expect((await s.call('PUT', '/Api/User/2', { body: { Id: 3, Phone: '1' } })).status).toBe(400);
    expect((await s.call('PUT', '/Api/User/2', { body: { EMail: first.EMail } })).status).toBe(409);
  });

  it('lists clients and gets one by both id paths', async () => {
    const all = await s.call<Client[]>('GET', '/Api/Client/Get');
    expect(all.body).toHaveLength(3);
    expect((await s.call<Client>('GET', '/Api/Client/2')).body).toEqual(all.body[1]);
    expect((await s.call<Client>('GET', '/Api/Client/Get/2')).body).toEqual(all.body[1]);
    expect((await s.call('GET', '/Api/Client/99')).status).toBe(404);
  });

  it('creates, updates and deletes a client, with 400 for a missing Name and 409 for a taken Email', async () => {
    const created = await s.call<Client>('POST', '/Api/Client', { body: { Name: 'Ferretería Güemes', Email: 'ventas@guemes.com.ar' } });
    expect(created.status).toBe(200);
    const id = created.body.Id;
    expect((await s.call('POST', '/Api/Client', { body: { Email: 'x@example.com' } })).status).toBe(400);
    expect((await s.call('POST', '/Api/Client', { body: { Name: 'Otro', Email: 'VENTAS@guemes.com.ar' } })).status).toBe(409);
    const updated = await s.call<Client>('PUT', `/Api/Client/${id}`, { body: { Phone: '+54 387 400-1000' } });
    expect(updated.body).toMatchObject({ Name: 'Ferretería Güemes', Phone: '+54 387 400-1000' });
    expect((await s.call('DELETE', `/Api/Client/${id}`)).status).toBe(200);
    expect((await s.call('GET', `/Api/Client/${id}`)).status).toBe(404);
    expect((await s.call('DELETE', `/Api/Client/${id}`)).status).toBe(404);
  });
});
