//! What a server's flavor and image slugs stand for. cloudscale names a flavor by its family,
//! memory and vCPUs (`flex-4-2` is 4 GB and 2 vCPUs; a GPU flavor appends its GPUs), so the
//! numbers the API shows follow from the slug; an image slug is its distribution and version
//! (`debian-12`, `ubuntu-24.04`), which names the OS and the login user the image sets up.

/// A server flavor as the API shows it inside a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flavor {
    pub name: String,
    pub vcpu_count: u32,
    pub memory_gb: u32,
}

/// `flex-4-2` → Flex-4-2 with 4 GB and 2 vCPUs; `None` for a slug of another shape.
pub fn flavor(slug: &str) -> Option<Flavor> {
    let mut parts = slug.split('-');
    let family = parts.next()?;
    if family.is_empty() || !family.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let memory_gb = positive(parts.next()?)?;
    let vcpu_count = positive(parts.next()?)?;
    Some(Flavor {
        name: capitalized(slug),
        vcpu_count,
        memory_gb,
    })
}

fn positive(number: &str) -> Option<u32> {
    number.parse().ok().filter(|&n| n > 0)
}

/// An image as the API shows it inside a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub name: String,
    pub operating_system: String,
    pub default_username: String,
}

/// The distributions cloudscale offers images of: (slug prefix, OS name, login user).
const DISTRIBUTIONS: &[(&str, &str, &str)] = &[
    ("alma", "AlmaLinux", "almalinux"),
    ("arch", "Arch Linux", "arch"),
    ("centos", "CentOS", "centos"),
    ("debian", "Debian", "debian"),
    ("fedora", "Fedora", "fedora"),
    ("flatcar", "Flatcar Container Linux", "core"),
    ("freebsd", "FreeBSD", "freebsd"),
    ("rocky", "Rocky Linux", "rocky"),
    ("ubuntu", "Ubuntu", "ubuntu"),
];

/// `debian-12` → Debian 12, logged into as `debian`. Any other slug stands for an OS of its
/// first word, with that word as the user.
pub fn image(slug: &str) -> Image {
    let (family, version) = slug.split_once('-').unwrap_or((slug, ""));
    let (os, user) = DISTRIBUTIONS
        .iter()
        .find(|(prefix, _, _)| family.eq_ignore_ascii_case(prefix))
        .map(|(_, os, user)| (os.to_string(), user.to_string()))
        .unwrap_or_else(|| (capitalized(family), family.to_ascii_lowercase()));
    let name = match version {
        "" => os.clone(),
        version => format!("{os} {}", version.replace('-', " ")),
    };
    Image {
        name,
        operating_system: os,
        default_username: user,
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flavor_slug_gives_memory_then_vcpus() {
        let flex = flavor("flex-4-2").unwrap();
        assert_eq!(
            (flex.name.as_str(), flex.memory_gb, flex.vcpu_count),
            ("Flex-4-2", 4, 2)
        );
        let gpu = flavor("gpu1-96-24-2-a4000").unwrap();
        assert_eq!((gpu.memory_gb, gpu.vcpu_count), (96, 24));
        for wrong in [
            "f",
            "flex",
            "flex-4",
            "flex-x-2",
            "flex-0-2",
            "-4-2",
            "lb-standard",
        ] {
            assert_eq!(flavor(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn an_image_slug_names_its_os_and_login_user() {
        let debian = image("debian-12");
        assert_eq!(
            (
                debian.name.as_str(),
                debian.operating_system.as_str(),
                debian.default_username.as_str()
            ),
            ("Debian 12", "Debian", "debian")
        );
        assert_eq!(image("flatcar-stable").default_username, "core");
        assert_eq!(image("ubuntu-24.04").name, "Ubuntu 24.04");
        let other = image("nixos-24.11");
        assert_eq!(
            (
                other.operating_system.as_str(),
                other.default_username.as_str()
            ),
            ("Nixos", "nixos")
        );
    }
}
