// An idempotency key is unique within ns + topic + group (the contract), and
// a topic keeps one map of them (ready/topic.ts's `keys`): a grouped key is
// filed under a string no ungrouped key can equal. Ungrouped keys are filed
// as they are, except that one starting with NUL gains a second NUL; grouped
// ones start with a single NUL and the group's length, so the two never meet
// and a topic that uses no groups pays nothing.

export function topicKeyOf(group: string | null, key: string): string {
  if (group === null) return key.charCodeAt(0) === 0 ? `\u0000${key}` : key;
  return `\u0000${group.length}:${group}${key}`;
}
