import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ValidationError } from '../../src/errors.js';
import { parseStoreDate } from '../../src/store/dates.js';
import { StoreConflictError, StoreNotFoundError } from '../../src/store/errors.js';
import type { User, UserSearchField } from '../../src/store/schemas/index.js';
import { type StoreFixture, storeFixture } from './setup.js';

let fixture: StoreFixture;

beforeAll(async () => {
  fixture = await storeFixture({ users: 12 });
});

afterAll(async () => {
  await fixture.close();
});

beforeEach(async () => {
  fixture.sim.reset();
  await fixture.client.login();
  fixture.sim.resetCounters();
});

function firstUser(): User {
  const [stored] = fixture.sim.state.users.values();
  if (!stored) throw new Error('the simulator has no users');
  return stored.user as User;
}

const newUser = {
  Username: 'ana.perez@example.com',
  FirstName: 'Ana',
  LastName: 'Pérez',
  EMail: 'ana.perez@example.com',
  Password: 'Init-Pass-123',
};

describe('users', () => {
  it('gets a user by id, with ISO dates without zone readable by parseStoreDate', async () => {
    const expected = firstUser();
    const user = await fixture.client.users.get(expected.Id!);
    expect(user).toMatchObject({ Id: expected.Id, Username: expected.Username, EMail: expected.EMail });
    expect(parseStoreDate(user.CreationDate, 'America/Argentina/Buenos_Aires')).toBeInstanceOf(Date);
  });

  it('throws StoreNotFoundError for an unknown id', async () => {
    await expect(fixture.client.users.get(98765)).rejects.toBeInstanceOf(StoreNotFoundError);
  });

  it('searches by field and term, and lists all with None and an empty term', async () => {
    const expected = firstUser();
    const byLastName = await fixture.client.users.search({ fields: 'LastName', term: expected.LastName! });
    expect(byLastName.map((u) => u.Id)).toContain(expected.Id);
    expect(await fixture.client.users.search({ fields: 'None', term: '' })).toHaveLength(12);
    expect(fixture.sim.counters().requests['GET /Api/User']).toBe(2);
  });

  it('reads a loosely typing store\'s users as the same typed values', async () => {
    const typed = await fixture.client.users.search({ fields: 'None', term: '' });
    fixture.sim.faults.set({ looseTypes: true });
    const loose = await fixture.client.users.search({ fields: 'None', term: '' });
    const view = (u: User) => [u.Id, u.SiteId, u.Access, u.ProfileId, u.PriceListId, u.Username, u.EMail];
    expect(loose.map(view)).toEqual(typed.map(view));
    const one = await fixture.client.users.get(firstUser().Id!);
    expect(view(one)).toEqual(view(typed.find((u) => u.Id === one.Id)!));
  });

  it('refuses a search field outside the spec before sending', async () => {
    await expect(fixture.client.users.search({ fields: 'Email' as UserSearchField, term: 'x' })).rejects.toBeInstanceOf(ValidationError);
    expect(fixture.sim.counters().total).toBe(0);
  });

  it('creates a user and refuses a duplicate with StoreConflictError, sent once', async () => {
    const created = (await fixture.client.users.create(newUser)) as User;
    expect(created).toMatchObject({ Username: newUser.Username, LastName: 'Pérez' });
    expect(fixture.sim.state.users.get(created.Id!)?.user.LastName).toBe('Pérez');
    fixture.sim.resetCounters();
    await expect(fixture.client.users.create(newUser)).rejects.toBeInstanceOf(StoreConflictError);
    expect(fixture.sim.counters().requests['POST /Api/User']).toBe(1);
  });

  it('refuses a creation without the required fields, naming each, and sends nothing', async () => {
    const error = await fixture.client.users
      .create({ Username: 'x@example.com', FirstName: '', EMail: 'x@example.com' } as typeof newUser)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.field).sort()).toEqual(['FirstName', 'LastName', 'Password']);
    expect(fixture.sim.counters().total).toBe(0);
  });

  it('updates only the fields sent and requires an Id', async () => {
    const expected = firstUser();
    await fixture.client.users.update({ Id: expected.Id!, Phone: '+54 11 5555-0000' });
    expect(fixture.sim.state.users.get(expected.Id!)?.user).toMatchObject({ Phone: '+54 11 5555-0000', LastName: expected.LastName });
    await expect(fixture.client.users.update({ Phone: '1' } as unknown as { Id: number })).rejects.toBeInstanceOf(ValidationError);
  });
});
