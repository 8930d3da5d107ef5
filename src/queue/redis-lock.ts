/**
 * The owner-checked Redis lock scripts, shared by every lock storesync keeps (the inventory SKU lock,
 * the schedule's run lock). A lock's value is its owner; only that owner may extend or delete it, so a
 * holder whose lease ran out cannot release the lock another instance has taken since.
 */

/** Lua: deletes KEYS[1] if its value is ARGV[1] (the owner); returns 1 when deleted. */
export const RELEASE_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/** Lua: sets KEYS[1]'s lease to ARGV[2] ms if its value is ARGV[1] (the owner); returns 1 when extended. */
export const RENEW_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;
