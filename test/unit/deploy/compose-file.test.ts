import fs from 'node:fs';
import path from 'node:path';
import { CONFIG_KEYS } from '../../../src/config/config';
import { bindMount, readCompose, readDockerfileStages, readYaml, ROOT, type ComposeService } from '../../support/deploy-files';

/**
 * docker-compose.yml cannot be brought up where the tests run (no Docker engine): these check
 * that its parts line up with each other and with the code — the settings it passes, the ports
 * Prometheus scrapes, the files Grafana is given.
 */
describe('docker-compose.yml', () => {
  const { services } = readCompose();
  const switchyard = { api: services.api!, worker: services.worker! };
  const portOf = (service: ComposeService) => Number(service.environment?.PORT);
  const mountOf = (service: ComposeService, container: string) => (service.volumes ?? []).map(bindMount).find((mount) => mount?.container === container) ?? undefined;
  const dependencies = (service: ComposeService): Record<string, { condition?: string }> =>
    Array.isArray(service.depends_on) ? Object.fromEntries(service.depends_on.map((name) => [name, {}])) : (service.depends_on ?? {});
  const commandText = (service: ComposeService) => [service.entrypoint, service.command].flat().filter(Boolean).join(' ');

  it('runs the API and two workers from the image of the Dockerfile', () => {
    for (const service of Object.values(switchyard)) expect(service.build).toBe('.');
    expect(switchyard.worker.deploy?.replicas).toBe(2);
    // The worker entry point is a file the build makes from workers/.
    const [program, entry] = switchyard.worker.command as string[];
    expect(program).toBe('node');
    expect(entry).toBe('dist/workers/worker.js');
    expect(fs.existsSync(path.join(ROOT, 'workers', 'worker.ts'))).toBe(true);
  });

  it('sets only environment variables the configuration knows', () => {
    for (const [name, service] of Object.entries(switchyard)) {
      const unknown = Object.keys(service.environment ?? {}).filter((key) => !CONFIG_KEYS.includes(key));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
    }
  });

  it('installs nothing when a container starts', () => {
    for (const [name, service] of Object.entries(services)) {
      expect({ name, command: commandText(service) }).not.toEqual({ name, command: expect.stringMatching(/\b(npm (install|ci|i)|yarn|pnpm|apt-get|apk add|pip install)\b/) });
    }
  });

  it('keeps Redis durable (AOF) and without eviction', () => {
    const command = commandText(services.redis!);
    expect(command).toMatch(/--appendonly yes/);
    expect(command).toMatch(/--maxmemory-policy noeviction/);
  });

  it('starts each service after the healthy services it needs, each of which has a health check', () => {
    const dockerfileHasHealthcheck = readDockerfileStages()
      .at(-1)!
      .instructions.some((instruction) => instruction.getKeyword() === 'HEALTHCHECK');
    for (const service of Object.values(switchyard)) {
      expect(dependencies(service)).toMatchObject({ redis: { condition: 'service_healthy' }, postgres: { condition: 'service_healthy' } });
    }
    for (const service of Object.values(services)) {
      for (const [needed, { condition }] of Object.entries(dependencies(service))) {
        if (condition !== 'service_healthy') continue;
        const dependency = services[needed]!;
        expect({ needed, checked: Boolean(dependency.healthcheck) || (dependency.build === '.' && dockerfileHasHealthcheck) }).toEqual({ needed, checked: true });
      }
    }
  });

  it("publishes the API's PORT, and the Dockerfile EXPOSEs the API's and the workers' ports", () => {
    expect(switchyard.api.ports?.map((mapping) => Number(mapping.split(':').at(-1)))).toContain(portOf(switchyard.api));
    const exposed = readDockerfileStages()
      .at(-1)!
      .instructions.filter((instruction) => instruction.getKeyword() === 'EXPOSE')
      .flatMap((instruction) => instruction.getArguments().map((argument) => Number(argument.getValue().split('/')[0])));
    expect(exposed.sort()).toEqual([portOf(switchyard.api), portOf(switchyard.worker)].sort());
  });

  describe('Prometheus', () => {
    const mount = mountOf(services.prometheus!, '/etc/prometheus/prometheus.yml');
    const scrapeConfigs = () =>
      (readYaml(mount!.host).scrape_configs ?? []) as {
        job_name: string;
        static_configs?: { targets: string[] }[];
        dns_sd_configs?: { names: string[]; type?: string; port: number }[];
      }[];

    it('is given a configuration file that exists', () => {
      expect(mount).toBeDefined();
      expect(fs.existsSync(mount!.host)).toBe(true);
    });

    it('scrapes the API on its service name and PORT', () => {
      const targets = scrapeConfigs().flatMap((job) => (job.static_configs ?? []).flatMap((config) => config.targets));
      expect(targets).toContain(`api:${portOf(switchyard.api)}`);
    });

    it('scrapes every worker replica: DNS A records of the service, on its PORT', () => {
      const lookups = scrapeConfigs().flatMap((job) => job.dns_sd_configs ?? []);
      expect(lookups).toContainEqual(expect.objectContaining({ names: ['worker'], type: 'A', port: portOf(switchyard.worker) }));
      // A fixed target would reach one replica only.
      const targets = scrapeConfigs().flatMap((job) => (job.static_configs ?? []).flatMap((config) => config.targets));
      expect(targets.filter((target) => target.startsWith('worker:'))).toEqual([]);
    });
  });

  describe('Grafana', () => {
    const provisioning = mountOf(services.grafana!, '/etc/grafana/provisioning');

    it('is given provisioning folders and dashboards that exist', () => {
      expect(provisioning).toBeDefined();
      for (const mount of (services.grafana!.volumes ?? []).map(bindMount)) expect(fs.existsSync(mount!.host)).toBe(true);
    });

    /** The entries under `key` of every provisioning file in `folder`. */
    const provisioned = (folder: string, key: string) =>
      fs.readdirSync(path.join(provisioning!.host, folder)).flatMap((file) => readYaml(path.join(provisioning!.host, folder, file))[key] ?? []);

    it('gets a Prometheus datasource at the address of the prometheus service', () => {
      const datasources = provisioned('datasources', 'datasources');
      expect(datasources).toContainEqual(expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090' }));
      expect(services.prometheus!.ports?.map((mapping) => mapping.split(':').at(-1))).toContain('9090');
    });

    it('loads dashboards from a mounted folder holding them, each of whose datasources is provisioned', () => {
      const datasourceUids = provisioned('datasources', 'datasources').map((datasource: { uid?: string }) => datasource.uid);
      const providers = provisioned('dashboards', 'providers');
      expect(providers.length).toBeGreaterThan(0);
      for (const provider of providers as { options: { path: string } }[]) {
        const mount = mountOf(services.grafana!, provider.options.path);
        expect({ path: provider.options.path, mounted: Boolean(mount) }).toEqual({ path: provider.options.path, mounted: true });
        const dashboards = fs.readdirSync(mount!.host).filter((file) => file.endsWith('.json'));
        expect(dashboards.length).toBeGreaterThan(0);
        for (const file of dashboards) {
          const used = new Set<string>();
          JSON.stringify(JSON.parse(fs.readFileSync(path.join(mount!.host, file), 'utf8')), (key, value) => {
            if (key === 'datasource' && typeof value?.uid === 'string' && !value.uid.startsWith('$')) used.add(value.uid);
            return value;
          });
          for (const uid of used) expect({ file, uid, provisioned: datasourceUids.includes(uid) }).toEqual({ file, uid, provisioned: true });
        }
      }
    });
  });
});
