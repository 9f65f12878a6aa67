/**
 * The domain generated for an org without one: `{slug}.{instanceDomain}`,
 * the slug being the name lowercased with runs of anything but a-z and 0-9
 * turned into single dashes (accents folded first).
 */
export function generatedDomain(name: string, instanceDomain: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
  return `${slug || 'org'}.${instanceDomain}`;
}

export function normaliseDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, '');
}
