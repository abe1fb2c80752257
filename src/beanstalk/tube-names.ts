// beanstalkd's tube names: 1..200 bytes of A-Z a-z 0-9 and - + / ; . $ _ ( ),
// not starting with a hyphen (is_valid_tube in beanstalkd's prot.c). Every
// valid name is a valid orq topic name (1..255 bytes).

const nameChar = /^[A-Za-z0-9\-+/;.$_()]*$/;

export function isValidTubeName(name: string, tubeBytesMax: number): boolean {
  return name.length > 0 && name.length <= tubeBytesMax && name.charCodeAt(0) !== 45 && nameChar.test(name);
}

/** How many leading characters of `text` are name characters (strspn with NAME_CHARS). */
export function nameCharsAt(text: string, start: number): number {
  let end = start;
  while (end < text.length && isNameChar(text.charCodeAt(end))) end++;
  return end - start;
}

function isNameChar(c: number): boolean {
  return (
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    (c >= 48 && c <= 57) ||
    c === 45 || c === 43 || c === 47 || c === 59 || c === 46 || c === 36 || c === 95 || c === 40 || c === 41
  );
}
